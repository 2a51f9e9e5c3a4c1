#!/usr/bin/env python3
"""Writes a minimal one-arm plan.json so the GPU tests can drive abharness-worker without the
orchestrator (which needs libgit2, absent on the GPU machine).

Mirrors core/model/plan.cpp's schema (plan schema 3); if the plan schema changes, this file must too —
the worker refuses a plan it cannot read, so a drift shows up as a failing test, not a wrong one.

usage: make_plan.py RUN_DIR PLUGIN_SO ENV_JSON PARAMS_JSON [key=value ...]
  ENV_JSON is the output of `abharness-worker probe --gpu 0`; key=value pairs override settings
  (values parsed as JSON when they parse, else kept as strings). The task is shape "s", arm "A1".
"""
import hashlib
import json
import os
import shutil
import sys


def field(h, s):
    b = s.encode()
    h.update(str(len(b)).encode() + b":" + b)


def identity():
    ident = {"requested": "WORKTREE", "kind": "worktree", "commit": "0" * 40,
             "tracked_diff_sha256": "", "untracked_sha256": "", "submodules": []}
    h = hashlib.sha256()
    for s in ["abharness-source-identity-v1", ident["kind"], ident["commit"],
              ident["tracked_diff_sha256"], ident["untracked_sha256"]]:
        field(h, s)
    ident["digest"] = h.hexdigest()
    return ident


def main():
    run_dir, plugin, env_path, params = sys.argv[1:5]
    overrides = sys.argv[5:]
    os.makedirs(os.path.join(run_dir, "variants", "baseline"), exist_ok=True)
    rel = os.path.join("variants", "baseline", os.path.basename(plugin))
    shutil.copyfile(plugin, os.path.join(run_dir, rel))
    with open(os.path.join(run_dir, rel), "rb") as f:
        plugin_sha = hashlib.sha256(f.read()).hexdigest()
    with open(env_path) as f:
        env = json.load(f)
    settings = {"timer": "auto", "stopping": "stdrel", "warmup_iterations": 3,
                "warmup_min_s": 0.05, "min_samples": 10, "min_time_s": 0.2, "max_noise": 0.005,
                "max_time_s": 10.0, "max_samples": 100000, "warm_l2": False,
                "arm_timeout_s": 300.0, "tactic": "auto", "clock_floor": 0.5,
                "clock_recovery_s": 0.05, "timing": "kernel"}
    for kv in overrides:
        k, v = kv.split("=", 1)
        if k not in settings:
            sys.exit("make_plan.py: unknown setting " + k)
        try:
            settings[k] = json.loads(v)
        except ValueError:
            settings[k] = v
    plan = {
        "schema_version": 3, "harness_version": "0.1.0", "run_id": "gpu-test",
        "run_nonce": os.urandom(16).hex(),
        "created_at": "2026-01-01T00:00:00.000Z", "repo": "/nonexistent",
        "plugin_target": "cuda", "command": ["tests/gpu/make_plan.py"],
        "worker_sha256": "",
        "variants": [{
            "name": "baseline", "source": identity(),
            "recipe": {"target": "cuda", "argv": ["tests/gpu/make_plan.py"], "artifact": rel,
                       "env": {},
                       "shell": False, "timeout_s": 60.0},
            "plugin": rel, "plugin_sha256": plugin_sha, "build_cache_key": "",
            "toolchain_id": "", "device": "cuda", "libraries": {}}],
        # One timing per plan shape (model/timing.hpp): the shape records the one asked for.
        "shapes": [{"id": "s", "params": json.loads(params), "timing": settings["timing"]}],
        "settings": settings,
        "schedule": {"name": "aba", "rounds": 1, "seed": 0, "gpus": 1},
        # One CPU this process may use: the worker pins itself to the task's CPUs.
        "tasks": [{"shape": "s", "arm": "A1", "variant": "baseline", "round": 0, "gpu": 0,
                   "conditional": False, "cpus": [min(os.sched_getaffinity(0))]}],
        "machine": [env],
        "placement_notes": [],
    }
    # The digest every reader recomputes: SHA-256 of the canonical JSON (sorted keys, no spaces,
    # UTF-8) of everything else, as nlohmann's dump() writes it.
    canonical = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    plan["payload_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    with open(os.path.join(run_dir, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)


if __name__ == "__main__":
    main()
