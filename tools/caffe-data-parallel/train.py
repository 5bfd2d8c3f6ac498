"""pycaffe training with blobrt's one line of data parallelism (docs/dist.md, "From pycaffe"):
    mpirun -np N python3 train.py SOLVER OUT.caffemodel
Rank 0 saves the weights and prints one RESULT line with the time per iteration."""
import sys
import time

import caffe
import blobrt.caffe

ranks = blobrt.caffe.data_parallel()  # the added line
caffe.set_mode_cpu()
solver = caffe.get_solver(sys.argv[1])
start = time.perf_counter()
solver.solve()
elapsed = time.perf_counter() - start
if caffe.solver_rank() == 0:
    solver.net.save(sys.argv[2])
    print(f"RESULT ranks={ranks} iterations={solver.iter} seconds={elapsed:.3f} "
          f"ms_per_iteration={1000 * elapsed / solver.iter:.2f}", flush=True)
