/* _confine: the system calls the sandbox child makes to confine itself, and
 * nothing else.
 *
 * Why a C extension: Python 3.11 has no os.unshare, prctl, seccomp, landlock
 * or capset, and doing them through ctypes loads _ctypes into the child. Its
 * types are static: once loaded they stay reachable from the program (a walk
 * of object.__subclasses__(), gc.get_objects()) whatever is removed from
 * sys.modules, and they are a generic "call any C function" primitive. This
 * module is not: every function either only restricts the calling process
 * (no_new_privs, death signal, capabilities, landlock, seccomp) or sets up the
 * namespaces and the run's tmpfs with fixed flags, and those refuse to run
 * once the lock-down has begun (`sealed`). Even a program that reached this
 * module could only confine itself further.
 *
 * Multi-phase initialisation (PEP 489) and no types of its own: the module is
 * not kept in CPython's extension cache, so once the child drops its last
 * reference nothing of it remains to be found.
 *
 * Errors raise OSError with the errno. The Python side is limits.py (see
 * confine_native.py for how it is found, and its ctypes stand-in).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS 38
#endif
/* Landlock's numbers are the same on x86_64 and aarch64; older headers lack them. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LANDLOCK_CREATE_RULESET_VERSION_ (1U << 0)
#define LANDLOCK_RULE_PATH_BENEATH_ 1

/* The namespaces the child may make for itself. */
#define NAMESPACE_FLAGS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* Set by the first restricting step of the lock-down; from then on the calls
 * that make namespaces or mounts refuse (the seccomp filter refuses them too). */
static int sealed = 0;

struct ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct path_beneath_attr { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

static PyObject *
refuse_sealed(void)
{
    errno = EPERM;
    return PyErr_SetFromErrno(PyExc_OSError);
}

PyDoc_STRVAR(unshare_namespaces_doc,
"unshare_namespaces(flags)\n--\n\n"
"unshare(2) with CLONE_NEW* flags only (mount, UTS, IPC, user, PID, network).");

static PyObject *
unshare_namespaces(PyObject *module, PyObject *arg)
{
    unsigned long flags = PyLong_AsUnsignedLong(arg);
    if (flags == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    if (flags & ~(unsigned long)NAMESPACE_FLAGS) {
        PyErr_SetString(PyExc_ValueError, "only CLONE_NEW* namespace flags are allowed");
        return NULL;
    }
    if (sealed)
        return refuse_sealed();
    if (unshare((int)flags) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(make_mounts_private_doc,
"make_mounts_private()\n--\n\n"
"Make every mount of this (new) mount namespace private, so no mount made here reaches the host.");

static PyObject *
make_mounts_private(PyObject *module, PyObject *unused)
{
    if (sealed)
        return refuse_sealed();
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(mount_workdir_tmpfs_doc,
"mount_workdir_tmpfs(target, size_kb, nr_inodes, owner)\n--\n\n"
"A tmpfs on `target`: noexec, nosuid, nodev, mode 0700, bounded in size and inodes; "
"owned by uid/gid `owner` unless it is -1.");

static PyObject *
mount_workdir_tmpfs(PyObject *module, PyObject *args)
{
    PyObject *target_obj;
    unsigned long size_kb, nr_inodes;
    long owner;
    char opts[160];
    int rc;

    if (!PyArg_ParseTuple(args, "O&kkl:mount_workdir_tmpfs", PyUnicode_FSConverter, &target_obj,
                          &size_kb, &nr_inodes, &owner))
        return NULL;
    if (owner >= 0)
        snprintf(opts, sizeof opts, "size=%luk,nr_inodes=%lu,mode=0700,uid=%ld,gid=%ld",
                 size_kb, nr_inodes, owner, owner);
    else
        snprintf(opts, sizeof opts, "size=%luk,nr_inodes=%lu,mode=0700", size_kb, nr_inodes);
    if (sealed) {
        Py_DECREF(target_obj);
        return refuse_sealed();
    }
    rc = mount("tmpfs", PyBytes_AS_STRING(target_obj), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts);
    Py_DECREF(target_obj);
    if (rc != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(drop_capabilities_doc,
"drop_capabilities()\n--\n\nEmpty this thread's effective, permitted and inheritable capability sets.");

static PyObject *
drop_capabilities(PyObject *module, PyObject *unused)
{
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];

    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_pdeathsig_kill_doc,
"set_pdeathsig_kill()\n--\n\nPR_SET_PDEATHSIG SIGKILL: die when the parent dies.");

static PyObject *
set_pdeathsig_kill(PyObject *module, PyObject *unused)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_no_new_privs_doc,
"set_no_new_privs()\n--\n\nPR_SET_NO_NEW_PRIVS; starts the lock-down (no namespace or mount after it).");

static PyObject *
set_no_new_privs(PyObject *module, PyObject *unused)
{
    sealed = 1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(landlock_abi_doc,
"landlock_abi()\n--\n\nThe kernel's landlock ABI version, 0 where it has none.");

static PyObject *
landlock_abi(PyObject *module, PyObject *unused)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION_);
    return PyLong_FromLong(abi < 0 ? 0 : abi);
}

PyDoc_STRVAR(landlock_restrict_doc,
"landlock_restrict(handled_fs, handled_net, scoped, attr_size, dir_fd, allowed_fs=handled_fs)\n--\n\n"
"Restrict this thread to the landlock domain that handles those rights and allows "
"the handled file rights of `allowed_fs` beneath `dir_fd` only (a subset of handled_fs: "
"read-only when it lacks the write and make rights). Starts the lock-down.");

static PyObject *
landlock_restrict(PyObject *module, PyObject *args)
{
    unsigned long long fs, net, scoped, allowed = ~0ULL;
    Py_ssize_t size;
    int dir_fd, ruleset, err = 0;
    struct ruleset_attr attr;
    struct path_beneath_attr rule;

    if (!PyArg_ParseTuple(args, "KKKni|K:landlock_restrict", &fs, &net, &scoped, &size, &dir_fd, &allowed))
        return NULL;
    if (size < 8 || size > (Py_ssize_t)sizeof attr) {
        PyErr_SetString(PyExc_ValueError, "attr_size must be 8, 16 or 24");
        return NULL;
    }
    sealed = 1;
    attr.handled_access_fs = fs;
    attr.handled_access_net = net;
    attr.scoped = scoped;
    ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, (size_t)size, 0);
    if (ruleset < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    rule.allowed_access = fs & allowed;  /* never a right the domain does not handle */
    rule.parent_fd = dir_fd;
    if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH_, &rule, 0) != 0
            || syscall(__NR_landlock_restrict_self, ruleset, 0) != 0)
        err = errno;
    close(ruleset);
    if (err) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(install_seccomp_doc,
"install_seccomp(program)\n--\n\n"
"Load `program` (struct sock_filter rows, packed) as a seccomp filter on this thread. "
"Filters only stack: a new one can never allow what an earlier one refuses.");

static PyObject *
install_seccomp(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    struct sock_fprog prog;
    int rc;

    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) != 0)
        return NULL;
    if (view.len == 0 || view.len % sizeof(struct sock_filter) != 0
            || view.len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "program must be 1 to 4096 packed sock_filter rows");
        return NULL;
    }
    sealed = 1;
    prog.len = (unsigned short)(view.len / sizeof(struct sock_filter));
    prog.filter = (struct sock_filter *)view.buf;
    rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
    PyBuffer_Release(&view);
    if (rc != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

static PyMethodDef confine_methods[] = {
    {"unshare_namespaces", unshare_namespaces, METH_O, unshare_namespaces_doc},
    {"make_mounts_private", make_mounts_private, METH_NOARGS, make_mounts_private_doc},
    {"mount_workdir_tmpfs", mount_workdir_tmpfs, METH_VARARGS, mount_workdir_tmpfs_doc},
    {"drop_capabilities", drop_capabilities, METH_NOARGS, drop_capabilities_doc},
    {"set_pdeathsig_kill", set_pdeathsig_kill, METH_NOARGS, set_pdeathsig_kill_doc},
    {"set_no_new_privs", set_no_new_privs, METH_NOARGS, set_no_new_privs_doc},
    {"landlock_abi", landlock_abi, METH_NOARGS, landlock_abi_doc},
    {"landlock_restrict", landlock_restrict, METH_VARARGS, landlock_restrict_doc},
    {"install_seccomp", install_seccomp, METH_O, install_seccomp_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot confine_slots[] = {
    {0, NULL},
};

static struct PyModuleDef confine_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_confine",
    .m_doc = "System calls by which the sandbox child confines itself; nothing that widens access.",
    .m_size = 0,
    .m_methods = confine_methods,
    .m_slots = confine_slots,
};

PyMODINIT_FUNC
PyInit__confine(void)
{
    return PyModuleDef_Init(&confine_module);
}
