/* The stand-in for pycaffe's extension module caffe._caffe: a Python extension that links
 * the stand-in libcaffe (which holds blobrt's data_parallel_entry.cpp), as pycaffe's
 * _caffe.so links Caffe's libcaffe.so. solver_count() and solver_rank() as pycaffe's;
 * solve(type) makes a solver through Caffe's registry as pycaffe's get_solver does and
 * solves it: (data_parallel, [parameter per layer], [gradient per layer]). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>

int caffe_stand_in_solver_count(void);
int caffe_stand_in_solver_rank(void);
int caffe_stand_in_solve(const char* type, double* data, double* diff, int layers, char* error, size_t error_size);

enum { kLayers = 3 };

static PyObject* solver_count(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(caffe_stand_in_solver_count());
}

static PyObject* solver_rank(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromLong(caffe_stand_in_solver_rank());
}

static PyObject* solve(PyObject* self, PyObject* args) {
  const char* type = NULL;
  double data[kLayers] = {0}, diff[kLayers] = {0};
  char error[1024] = "";
  int parallel;
  PyObject *data_list, *diff_list;
  (void)self;
  if (!PyArg_ParseTuple(args, "s", &type)) return NULL;
  parallel = caffe_stand_in_solve(type, data, diff, kLayers, error, sizeof error);
  if (parallel < 0) {
    PyErr_SetString(PyExc_RuntimeError, error);
    return NULL;
  }
  data_list = Py_BuildValue("[ddd]", data[0], data[1], data[2]);
  diff_list = Py_BuildValue("[ddd]", diff[0], diff[1], diff[2]);
  return Py_BuildValue("(ONN)", parallel ? Py_True : Py_False, data_list, diff_list);
}

static PyMethodDef methods[] = {
    {"solver_count", solver_count, METH_NOARGS, "Caffe::solver_count()"},
    {"solver_rank", solver_rank, METH_NOARGS, "Caffe::solver_rank()"},
    {"solve", solve, METH_VARARGS, "solve(type): a solver from Caffe's registry, solved"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_caffe",
    .m_doc = "A stand-in for pycaffe's extension (blobrt's tests)",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__caffe(void) { return PyModule_Create(&module); }
