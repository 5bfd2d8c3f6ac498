"""`blobrt info --json` and `blobrt inspect --json` against the JSON Schemas in docs/.

usage: cli_schema_test.py BLOBRT DOCS_DIR DATA_DIR BACKEND...

info --json under BLOBRT_BACKEND=each backend given (its active device must be that
backend's), with a plugin directory whose path holds a byte that is not UTF-8 (the output
must still be strict UTF-8), and inspect --json of a reference file; each must validate.
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

blobrt, docs, data = sys.argv[1:4]
backends = sys.argv[4:]
failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print(detail[-3000:])


def schema(name):
    with open(os.path.join(docs, name)) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


info_schema = schema("blobrt-info.schema.json")
inspect_schema = schema("blobrt-inspect.schema.json")


def run(args, env_extra=None):
    env = dict(os.environb)
    for k, v in (env_extra or {}).items():
        env[k.encode()] = v if isinstance(v, bytes) else v.encode()
    p = subprocess.run([blobrt] + args, env=env, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def validate(what, validator, raw):
    try:
        doc = json.loads(raw.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, ValueError) as e:
        check(False, what + ": strict UTF-8 JSON (%s)" % e, raw.decode(errors="replace"))
        return None
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    check(not errors, what + ": validates", "\n".join("%s: %s" % (list(e.path), e.message) for e in errors[:10]))
    return doc


for backend in backends:
    rc, out, err = run(["info", "--json"], {"BLOBRT_BACKEND": backend})
    check(rc == 0, "info --json with BLOBRT_BACKEND=%s exits 0" % backend, err)
    doc = validate("info --json, BLOBRT_BACKEND=%s" % backend, info_schema, out)
    if doc:
        check((doc["active"] or "").startswith(backend + ":"), "BLOBRT_BACKEND=%s: active is %s" % (backend, doc["active"]))
        check(doc["selection"]["chosen"] is not None and doc["selection"]["chosen"]["device"] == doc["active"],
              "BLOBRT_BACKEND=%s: selection.chosen is the active device" % backend, json.dumps(doc["selection"]))
        others = [k for k in doc["selection"]["skipped"] if k["backend"] != backend]
        check(others and all(k["code"] == "not_named" for k in others),
              "BLOBRT_BACKEND=%s: every other backend is skipped as not_named" % backend, json.dumps(doc["selection"]))

# A backend that cannot be used: still valid, with the error in the selection.
rc, out, err = run(["info", "--json"], {"BLOBRT_BACKEND": "nosuch"})
check(rc == 1, "info --json with BLOBRT_BACKEND=nosuch exits 1", err)
doc = validate("info --json, BLOBRT_BACKEND=nosuch", info_schema, out)
if doc:
    check(doc["active"] is None and "nosuch" in (doc["selection"]["error"] or ""), "the error is in selection.error")
    check([(k["backend"], k["code"]) for k in doc["selection"]["skipped"]] == [("nosuch", "not_found")],
          "the backend named is skipped with code not_found", json.dumps(doc["selection"]["skipped"]))

# A plugin directory whose path holds 0xff: U+FFFD in strict UTF-8 output.
with tempfile.TemporaryDirectory() as tmp:
    odd = os.path.join(os.fsencode(tmp), b"plugins-\xff-dir")
    os.mkdir(odd)
    path = odd + b":" + os.environb.get(b"BLOBRT_PLUGIN_PATH", b"")
    rc, out, err = run(["info", "--json"], {"BLOBRT_PLUGIN_PATH": path})
    check(rc == 0, "info --json with a non-UTF-8 plugin path exits 0", err)
    doc = validate("info --json, non-UTF-8 plugin path", info_schema, out)
    if doc:
        check("plugins-\ufffd-dir" in doc["search_path"][0]["path"], "the byte reads as U+FFFD",
              doc["search_path"][0]["path"])

rc, out, err = run(["inspect", "--json", os.path.join(data, "ref_float_2x3x4x5_diff.binaryproto")])
check(rc == 0, "inspect --json exits 0", err)
doc = validate("inspect --json", inspect_schema, out)
if doc:
    check(doc["diff"]["sumsq"] == 36451.25, "inspect --json: sumsq reads back exactly", json.dumps(doc["diff"]))

# A Caffe model file BVLC Caffe wrote (shared/reference-data beside the checkout).
model = os.path.join(os.environ.get("BLOBRT_REFERENCE_DATA_DIR", ""), "lenet_iter_200.caffemodel")
if os.path.exists(model):
    rc, out, err = run(["inspect", "--json", model])
    check(rc == 0, "inspect --json of a .caffemodel exits 0", err)
    doc = validate("inspect --json of a .caffemodel", inspect_schema, out)
    if doc:
        layers = {layer["name"]: layer for layer in doc["layers"]}
        check(doc["kind"] == "caffemodel" and len(doc["layers"]) == 9 and
              layers["conv1"]["blobs"][0]["shape"] == [20, 1, 5, 5] and layers["conv1"]["type"] == "Convolution",
              "inspect --json lists LeNet's 9 layers, conv1 (20, 1, 5, 5)", out[:500])
else:
    print("skipped: inspect --json of a .caffemodel (no %s)" % model)

# Python's blobrt.info() is the same description (the extension links the same code): it
# validates too, and equals the command's JSON but for what differs between two processes.
python_dir = os.environ.get("BLOBRT_PYTHON_DIR", "")
if python_dir and os.path.exists(os.path.join(python_dir, "blobrt", "__init__.py")):
    script = "import json, blobrt; print(json.dumps(blobrt.info()))"
    env = dict(os.environ, PYTHONPATH=python_dir)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, env=env)
    doc = validate("Python blobrt.info()", info_schema, p.stdout) if p.returncode == 0 else None
    check(p.returncode == 0, "Python blobrt.info() runs", p.stderr.decode(errors="replace"))
    rc, out, err = run(["info", "--json"])
    if doc and rc == 0:
        cli = json.loads(out)
        for key in ("schema_version", "version", "abi", "search_path", "active"):
            check(doc[key] == cli[key], "Python info()[%r] equals the command's" % key,
                  "%r != %r" % (doc[key], cli[key]))
        check([p["name"] for p in doc["plugins"]] == [p["name"] for p in cli["plugins"]] and
              set(doc["plugins"][0]) == set(cli["plugins"][0]), "Python info() lists the same plugins, same keys")
else:
    print("skip Python blobrt.info(): the package was not built")

print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
