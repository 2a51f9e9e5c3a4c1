"""abharness's Python front end (python/abharness_front_end.py starts it), one module a concern:

    main.py          the process: its command line, the orchestrator it follows, the engine it loads
    plan.py          the arm as the plan says it (the plan's schema checked as the engine checks it)
    identity.py      the interpreter's identity, recorded in the plan and in each result
    user_module.py   the user's module and problem object, checked against the protocol
    plugin_table.py  the plugin table of C callbacks over the problem, handed to the engine
    frameworks.py    the worker's stream made current in torch and cupy
    errors.py        the front end's failures and its log lines
    protocol.py      exit codes, flags, ABI constants and layouts, generated at build time from
                     the C++ headers (worker/python_protocol.cpp): in the build tree and the
                     install only

Nothing here is for plugins to import: `abharness` (the package above) is their helper module.
"""
