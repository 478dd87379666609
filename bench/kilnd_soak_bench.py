#!/usr/bin/env python3
"""kilnd under a long mixed load, and the cost of --isolate=process (issue 11).

Not a test (CI does not run it); it prints figures.

1. Isolation: the example CNN (examples/make_small_cnn.py) compiled by a kilnd
   with --isolate=thread and one with --isolate=process, alternately, with no
   result cache; medians and their ratio.
2. Stalled readers: the median latency of the example CNN's Compile, alone and
   while 32 TracePass streams whose readers stopped reading (their events fill
   the client's flow-control window) are open; the ratio (target <= 1.10).
3. Soak: a bounded loop (--minutes, default 10) of mixed RPCs against a kilnd
   with 2 workers from 4 client threads: compiles of distinct models, traces
   read to the end and traces cancelled after their first event, compiles
   whose deadline expires inside a slow constant fold, schedule records, bad
   requests, pass listings. kilnd's RSS, open fds and threads are sampled
   every 10 s; the last sample is compared with the first after warm-up.

usage: KILN_KILND=build/service/kilnd PYTHONPATH=build/python \\
         /usr/bin/python3 bench/kilnd_soak_bench.py [--minutes M] [--isolation-runs N]
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import numpy as np
from onnx import TensorProto, helper

from kiln.v1 import compiler_pb2 as pb
from kiln.v1 import compiler_pb2_grpc as rpc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


ADDRESSES = {}


def kilnd_address(process):
    return ADDRESSES[process.pid]


def start_kilnd(*flags):
    kilnd = os.environ.get("KILN_KILND", os.path.join(ROOT, "build/service/kilnd"))
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [kilnd, "--listen=127.0.0.1:0", "--metrics-listen=", *flags],
        stdout=subprocess.PIPE, stderr=log)
    line = process.stdout.readline().decode()
    address = line.split("grpc=")[1].split()[0]
    ADDRESSES[process.pid] = address
    channel = grpc.insecure_channel(address, options=[
        ("grpc.max_receive_message_length", 512 << 20),
        ("grpc.max_send_message_length", 512 << 20)])
    return process, rpc.CompilerStub(channel)


def cnn_request(model, name):
    request = pb.CompileRequest(onnx=model, name=name)
    request.input_shapes.add(name="input", dims=[1, 3, 16, 16])  # the model's batch is "N"
    return request


def small_cnn():
    with tempfile.NamedTemporaryFile(suffix=".onnx") as out:
        subprocess.run([sys.executable, os.path.join(ROOT, "examples/make_small_cnn.py"), out.name],
                       check=True, stdout=subprocess.DEVNULL)
        return open(out.name, "rb").read()


def slow_folding_model(n=1024):
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [n, n])
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["f"], name="fill",
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
             helper.make_node("MatMul", ["f", "f"], ["y"], name="square")]
    graph = helper.make_graph(nodes, "slow", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])],
                              [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    rss_mib = int(fields["VmRSS"].split()[0]) / 1024
    return rss_mib, len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"])


def isolation_overhead(model, runs):
    thread_kilnd, thread_stub = start_kilnd("--workers=1", "--cache-bytes=0")
    process_kilnd, process_stub = start_kilnd("--workers=1", "--cache-bytes=0", "--isolate=process")
    times = {"thread": [], "process": []}
    request = cnn_request(model, "small_cnn")
    for i in range(runs + 2):
        for mode, stub in (("thread", thread_stub), ("process", process_stub)):
            start = time.perf_counter()
            stub.Compile(request, timeout=120)
            if i >= 2:  # warm-up
                times[mode].append(time.perf_counter() - start)
    for process in (thread_kilnd, process_kilnd):
        process.terminate()
        process.wait()
    thread_ms = statistics.median(times["thread"]) * 1e3
    process_ms = statistics.median(times["process"]) * 1e3
    print(f"isolation: example CNN compile, median of {runs}: thread {thread_ms:.1f} ms, "
          f"process {process_ms:.1f} ms, ratio {process_ms / thread_ms:.3f} "
          f"(+{process_ms - thread_ms:.1f} ms per request)")


def median_compile_ms(stub, model, runs):
    times = []
    for i in range(runs):
        request = cnn_request(model, "small_cnn")
        request.target.cpu = f"latency-{i}-{random.randrange(1 << 30)}"  # no cache hits
        start = time.perf_counter()
        stub.Compile(request, timeout=120)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def stalled_readers(model, runs):
    kilnd, stub = start_kilnd("--workers=2", "--queue-depth=40", "--max-concurrent-streams=64",
                              "--default-deadline=10m")
    median_compile_ms(stub, model, 3)  # warm-up
    alone = median_compile_ms(stub, model, runs)
    # A client that never grows its flow-control windows and never reads.
    channel = grpc.insecure_channel(
        kilnd_address(kilnd),
        options=[("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 65536),
                 ("grpc.max_receive_message_length", 64 << 20)])
    stalled_stub = rpc.CompilerStub(channel)
    request = pb.TraceRequest(compile=cnn_request(model, "stalled"),
                              ir_before=True, ir_after=True, format=pb.JSON)
    calls = [stalled_stub.TracePass(request) for _ in range(32)]
    time.sleep(5)  # their compiles finish; their events wait on the window
    stalled = median_compile_ms(stub, model, runs)
    for call in calls:
        call.cancel()
    kilnd.terminate()
    kilnd.wait()
    print(f"stalled readers: example CNN compile, median of {runs}: alone {alone:.1f} ms, "
          f"with 32 stalled TracePass streams {stalled:.1f} ms, ratio {stalled / alone:.3f}")


def soak(model, minutes):
    kilnd, stub = start_kilnd("--workers=2", "--queue-depth=8", "--default-deadline=20s",
                              "--cache-bytes=67108864")
    slow = slow_folding_model()
    stop = time.monotonic() + minutes * 60
    counts = {}
    lock = threading.Lock()

    def count(kind, code):
        with lock:
            counts[(kind, code)] = counts.get((kind, code), 0) + 1

    def client(seed):
        rng = random.Random(seed)
        while time.monotonic() < stop:
            kind = rng.choice(["compile", "trace", "trace-cancel", "deadline", "schedule", "bad",
                               "passes"])
            request = cnn_request(model, "soak")
            # Distinct compile ids (the target is part of it): cache misses.
            request.target.cpu = f"soak-{rng.randrange(1 << 30)}"
            try:
                if kind == "compile":
                    stub.Compile(request, timeout=60)
                elif kind == "trace":
                    for _ in stub.TracePass(pb.TraceRequest(compile=request, ir_after=True),
                                            timeout=60):
                        pass
                elif kind == "trace-cancel":
                    call = stub.TracePass(pb.TraceRequest(compile=request), timeout=60)
                    next(call)
                    call.cancel()
                elif kind == "deadline":
                    stub.Compile(pb.CompileRequest(onnx=slow, name="slow"), timeout=0.3)
                elif kind == "schedule":
                    stub.GetScheduleRecord(pb.ScheduleRecordRequest(
                        compile=request, selector="/conv1/Conv", verify=True), timeout=60)
                elif kind == "bad":
                    stub.Compile(pb.CompileRequest(onnx=bytes(rng.randrange(256)
                                                              for _ in range(200))), timeout=60)
                else:
                    stub.ListPasses(pb.ListPassesRequest(), timeout=60)
                count(kind, "OK")
            except grpc.RpcError as error:
                count(kind, error.code().name)
            except StopIteration:
                count(kind, "EMPTY")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    samples = []
    start = time.monotonic()
    while any(thread.is_alive() for thread in threads):
        samples.append((time.monotonic() - start, *proc_status(kilnd.pid)))
        print(f"  t={samples[-1][0]:6.0f}s  rss={samples[-1][1]:8.1f} MiB  fds={samples[-1][2]:4d}  "
              f"threads={samples[-1][3]:3d}", flush=True)
        time.sleep(10)
    for thread in threads:
        thread.join()
    samples.append((time.monotonic() - start, *proc_status(kilnd.pid)))
    kilnd.terminate()
    kilnd.wait()
    print("calls:", ", ".join(f"{kind} {code}: {n}" for (kind, code), n in sorted(counts.items())))
    # After warm-up (the cache fills, allocator arenas settle): the first
    # sample past 20% of the run against the last.
    base = next(s for s in samples if s[0] >= 0.2 * minutes * 60)
    last = samples[-1]
    print(f"soak: {minutes} min, {sum(counts.values())} calls; from t={base[0]:.0f}s to the end: "
          f"rss {base[1]:.1f} -> {last[1]:.1f} MiB (x{last[1] / base[1]:.3f}), "
          f"fds {base[2]} -> {last[2]}, threads {base[3]} -> {last[3]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--isolation-runs", type=int, default=20)
    args = parser.parse_args()
    model = small_cnn()
    isolation_overhead(model, args.isolation_runs)
    stalled_readers(model, args.isolation_runs)
    soak(model, args.minutes)


if __name__ == "__main__":
    main()
