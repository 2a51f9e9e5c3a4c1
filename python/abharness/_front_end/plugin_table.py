"""The plugin table (include/abharness/plugin.h) over the user's problems, as ctypes callbacks,
and the front end's table (include/abharness/worker.h) that hands it to the engine.

The ctypes structures spell the C structs field by field; before a table is handed over, each is
checked against the sizes and offsets the compiler gave them (protocol.LAYOUTS), so a header
changed without this file fails here, by name, instead of in the engine."""

import ctypes
import json

import abharness

from . import protocol
from .errors import FrontEndError, ProtocolError, error_reason, print_traceback
from .frameworks import CapturedGraphs, FrameworkStreams, log_cuda_libraries
from .user_module import Problem


class VerifyResult(ctypes.Structure):
    _fields_ = [("max_rel_error", ctypes.c_double), ("tolerance", ctypes.c_double),
                ("checked", ctypes.c_uint64), ("method", ctypes.c_char * 128)]


_ERR = (ctypes.c_void_p, ctypes.c_size_t)  # char* err, size_t err_len
CREATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), *_ERR)
ENQUEUE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, *_ERR)
VERIFY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(VerifyResult), *_ERR)
AMOUNT = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)
TACTIC_COUNT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
TACTIC_KEY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                              ctypes.c_size_t)
SELECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, *_ERR)
LIBRARIES = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
SESSION_OPENED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)
CAPABILITIES = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)
SET_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, *_ERR)
CAPTURE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                           ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), *_ERR)
REPLAY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, *_ERR)
DESTROY_GRAPH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class PluginTable(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("device", ctypes.c_int), ("create", CREATE), ("enqueue", ENQUEUE),
                ("verify", VERIFY), ("flops", AMOUNT), ("min_bytes", AMOUNT),
                ("tactic_count", TACTIC_COUNT), ("tactic_key", TACTIC_KEY),
                ("select_tactic", SELECT), ("library_versions", LIBRARIES),
                ("destroy", DESTROY)]


class PluginTableV2(ctypes.Structure):
    _fields_ = [("v1", PluginTable), ("capabilities", CAPABILITIES),
                ("buffer_set_bytes", AMOUNT), ("make_buffer_sets", SET_CALL),
                ("use_buffer_set", SET_CALL), ("capture_graph", CAPTURE),
                ("replay_graph", REPLAY), ("destroy_graph", DESTROY_GRAPH)]


class FrontEndTable(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("kind", ctypes.c_char_p),
                ("plugin", ctypes.POINTER(PluginTable)), ("script_path", ctypes.c_char_p),
                ("identity_json", ctypes.c_char_p), ("session_opened", SESSION_OPENED)]


def check_layouts():
    """Each ctypes structure lays out as the C struct it stands for (protocol.LAYOUTS)."""
    for struct, c_name in ((VerifyResult, "abh_verify_result"), (PluginTable, "abh_plugin_v1"),
                           (PluginTableV2, "abh_plugin_v2"),
                           (FrontEndTable, "abh_worker_front_end")):
        size, fields = protocol.LAYOUTS[c_name]
        ours = (ctypes.sizeof(struct),
                tuple((name, getattr(struct, name).offset) for name, _ in struct._fields_))
        if ours != (size, tuple(fields)):
            raise FrontEndError("the front end's %s is laid out as %r, but the headers the engine "
                                "was built with say %r (size, fields): the front end and the "
                                "engine come from different builds"
                                % (c_name, ours, (size, fields)))


def say(buf, length, text):
    """Copies `text` into a C buffer of the ABI, truncated and NUL-terminated."""
    if buf and length:
        data = text.encode("utf-8", "replace")[:length - 1]
        ctypes.memmove(buf, data, len(data))
        ctypes.memset(buf + len(data), 0, 1)


def guarded(what, err, length, body, status=protocol.ABH_ERR_RUNTIME):
    """Runs a callback's body, and turns anything it raises into a status and a message: an
    exception that escaped into ctypes would be printed and swallowed, and the engine would read
    a status of 0 (success)."""
    try:
        return body()
    except BaseException as e:
        if isinstance(e, ProtocolError):
            say(err, length, str(e))
            return status
        print_traceback()
        say(err, length, "%s raised %s" % (what, error_reason(e)))
        return protocol.ABH_ERR_UNSUPPORTED if isinstance(e, abharness.Unsupported) else status


class PythonPlugin:
    """The plugin table (ABI version 2) over one Python problem at a time, and the engine it is
    handed to."""

    def __init__(self, entry, arm, origin):
        self.entry, self.arm, self.origin = entry, arm, origin
        self.problems = {}  # handle -> Problem
        self.made = 0
        self.streams = FrameworkStreams()
        self.graphs = CapturedGraphs(self.streams)
        self.failure = None
        device = arm.python["device"]
        v1 = PluginTable(
            protocol.PLUGIN_ABI_VERSION, ("python:" + arm.python["module"]).encode(),
            protocol.DEVICE_KINDS[device], CREATE(self._create), ENQUEUE(self._enqueue),
            VERIFY(self._verify), AMOUNT(lambda p: self.problems[p].flops),
            AMOUNT(lambda p: self.problems[p].bytes),
            TACTIC_COUNT(lambda p: len(self.problems[p].tactics)), TACTIC_KEY(self._tactic_key),
            SELECT(self._select), LIBRARIES(self._libraries), DESTROY(self._destroy))
        self.table = PluginTableV2(
            v1, CAPABILITIES(self._capabilities),
            AMOUNT(lambda p: self.problems[p].set_bytes),
            SET_CALL(self._make_buffer_sets), SET_CALL(self._use_buffer_set),
            CAPTURE(self._capture), REPLAY(self._replay), DESTROY_GRAPH(self._destroy_graph))

    def _session_opened(self, stream, device):
        try:
            self.streams.stream = stream
            abharness._set_stream(stream or 0)
            self.streams.bind()
        except BaseException as e:
            print_traceback()
            self.failure = "binding the worker's stream raised " + error_reason(e)

    def _create(self, params_json, out, err, length):
        def body():
            if self.failure:
                raise RuntimeError(self.failure)
            params = json.loads(params_json.decode())
            obj = self.entry(params)
            problem = Problem(obj, self.origin + "(" + json.dumps(params, sort_keys=True) + ")")
            if self.streams.stream:
                self.streams.bind()
                self.streams.synchronize()
                if not self.made:
                    log_cuda_libraries()
            self.made += 1
            handle = self.made
            self.problems[handle] = problem
            out[0] = handle
            return protocol.ABH_OK

        return guarded(self.origin + "(params)", err, length, body)

    def _enqueue(self, handle, stream, err, length):
        def body():
            if stream and not self.streams.all_bound():
                self.streams.bind()
            self.problems[handle].obj.run()
            return protocol.ABH_OK

        return guarded("run()", err, length, body)

    def _verify(self, handle, out, err, length):
        def body():
            passed, max_err, tolerance, checked, method = self.problems[handle].verification()
            out[0].max_rel_error = max_err
            out[0].tolerance = tolerance
            out[0].checked = checked
            out[0].method = method.encode("utf-8", "replace")[:127]
            return protocol.ABH_OK if passed else protocol.ABH_ERR_WRONG_RESULT

        return guarded("verify()", err, length, body)

    def _tactic_key(self, handle, index, buf, length):
        tactics = self.problems[handle].tactics
        if not 0 <= index < len(tactics):
            return protocol.ABH_ERR_INVALID_PARAMS
        say(buf, length, tactics[index])
        return protocol.ABH_OK

    def _select(self, handle, key, err, length):
        def body():
            self.problems[handle].select(key.decode())
            return protocol.ABH_OK

        return guarded("select(%r)" % key.decode(errors="replace"), err, length, body,
                       protocol.ABH_ERR_INVALID_PARAMS)

    def _capabilities(self, handle):
        # Read and checked when the problem was made (user_module.Problem): nothing can raise.
        caps = self.problems[handle].capabilities
        if caps & protocol.ABH_CAP_CAPTURABLE and self.graphs.framework():
            caps |= protocol.ABH_CAP_OWN_GRAPHS
        return caps

    def _make_buffer_sets(self, handle, count, err, length):
        def body():
            self.problems[handle].obj.make_buffer_sets(count)
            return protocol.ABH_OK

        return guarded("make_buffer_sets(%d)" % count, err, length, body)

    def _use_buffer_set(self, handle, index, err, length):
        def body():
            self.problems[handle].obj.use_buffer_set(index)
            return protocol.ABH_OK

        return guarded("use_buffer_set(%d)" % index, err, length, body)

    def _capture(self, handle, stream, iterations, sets, out, err, length):
        def body():
            out[0] = self.graphs.capture(self.problems[handle], stream, iterations, sets)
            return protocol.ABH_OK

        return guarded("capturing %d iterations of run() into a CUDA graph" % iterations, err,
                       length, body)

    def _replay(self, handle, graph, stream, err, length):
        def body():
            self.graphs.replay(graph, stream)
            return protocol.ABH_OK

        return guarded("replaying the CUDA graph of run()", err, length, body)

    def _destroy_graph(self, handle, graph):
        self.graphs.destroy(graph)

    def _libraries(self, buf, length):
        say(buf, length, "{}")
        return protocol.ABH_OK

    def _destroy(self, handle):
        self.problems.pop(handle, None)

    def run(self, engine, argv, script, identity):
        """Hands the table to the engine's abh_worker_main with `argv`; its exit code."""
        check_layouts()
        self.session_opened = SESSION_OPENED(self._session_opened)  # kept alive while it runs
        # The version-2 table begins with its version-1 part, whose abi_version says 2.
        front_end = FrontEndTable(protocol.FRONT_END_VERSION, b"python",
                                  ctypes.cast(ctypes.pointer(self.table),
                                              ctypes.POINTER(PluginTable)),
                                  script.encode(), json.dumps(identity).encode(),
                                  self.session_opened)
        args = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
        worker_main = getattr(engine, protocol.WORKER_MAIN_SYMBOL)
        worker_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                ctypes.POINTER(FrontEndTable)]
        worker_main.restype = ctypes.c_int
        return worker_main(len(argv), args, ctypes.byref(front_end))
