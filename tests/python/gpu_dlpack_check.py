"""Blob memory on a CUDA device handed to PyTorch and CuPy through DLPack without a copy
(issue 27, step 4), run by the GPU bundle on the node (tools/gpu-bundle/run-on-gpu.sh):
  python3 gpu_dlpack_check.py
Every device whose description says it is CUDA memory with addressable handles (not a
backend name) is checked: torch.from_dlpack and cupy.from_dlpack of blob.device_data give
the same pointer, a write through torch is what blob.asum_data() sums, a Blob.scale_data
is what torch reads back, and a second export is the same memory. Exit status 0 when every
check that could run passed; 77 when none could (no such device, or neither library),
with the reason; 1 on a failure."""
import importlib
import sys
from typing import Any

import blobrt

SKIP = 77


def check(condition: bool, what: str) -> None:
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        sys.exit(1)


def cuda_devices() -> list[str]:
    return [d["id"] for d in blobrt.devices() if d["native_type"] == "cuda" and d["addressable_handles"]]


def optional_module(name: str) -> Any:
    """The module, or None where it is not installed (torch and cupy are on GPU nodes)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def main() -> int:
    devices = cuda_devices()
    if not devices:
        print("skipped: no device here says it is CUDA memory (blobrt.devices(): %s)"
              % ", ".join(d["id"] + "=" + str(d["native_type"]) for d in blobrt.devices()))
        return SKIP
    torch = optional_module("torch")
    cupy = optional_module("cupy")
    if torch is None and cupy is None:
        print("skipped: neither torch nor cupy can be imported here")
        return SKIP
    for device in devices:
        blobrt.select_backend(device)
        index = int(device.rsplit(":", 1)[1])
        b = blobrt.Blob((1000, 1003))  # 1,003,000 floats: not a multiple of any vector width
        b.data[...] = 1
        count = b.count
        exported = b.device_data
        dl_type, dl_index = exported.__dlpack_device__()
        check(dl_type == 2, f"{device}: __dlpack_device__ type is kDLCUDA (got {dl_type})")
        pointers: list[tuple[str, int]] = []
        if torch is not None:
            t = torch.from_dlpack(exported)
            check(t.is_cuda and t.device.index == dl_index, f"{device}: torch sees cuda:{dl_index} ({t.device})")
            check(tuple(t.shape) == (1000, 1003), f"{device}: torch shape {tuple(t.shape)}")
            pointers.append(("torch", t.data_ptr()))
            t.mul_(3)  # on torch's stream; __dlpack__ and asum_data order it (docs/python.md)
            torch.cuda.synchronize(t.device)
            check(b.asum_data() == 3.0 * count, f"{device}: a write through torch is what asum_data sums")
            b.scale_data(0.5)
            blobrt_sum = float(t.sum().item())
            check(blobrt_sum == 1.5 * count, f"{device}: torch reads what scale_data wrote ({blobrt_sum})")
            again = torch.from_dlpack(b.device_data)
            check(again.data_ptr() == t.data_ptr(), f"{device}: a second export is the same memory")
        if cupy is not None:
            c = cupy.from_dlpack(b.device_data)
            check(c.device.id == dl_index, f"{device}: cupy sees device {c.device.id}")
            pointers.append(("cupy", int(c.data.ptr)))
            c += 1
            cupy.cuda.runtime.deviceSynchronize()
            expected = (1.5 if torch is not None else 1.0) + 1
            check(b.asum_data() == expected * count, f"{device}: a write through cupy is what asum_data sums")
        if len(pointers) == 2:
            check(pointers[0][1] == pointers[1][1], f"{device}: torch and cupy share one pointer {pointers}")
        print(f"{device} ({index}): DLPack to " + " and ".join(n for n, _ in pointers) + " without a copy", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
