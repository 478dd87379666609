#!/usr/bin/env python3
"""The shared result cache's figures (issue 16): what a Redis hit on another replica and a
Redis miss cost against a plain compile.

Not a test (CI does not run it); it prints figures, as ratios to a baseline measured in the
same run. A real redis-server (unix socket) and three kilnd started here, each with
--cache-bytes=0 so that no in-process cache answers:
  plain   kilnd without --cache-redis: every Compile compiles (the baseline);
  miss    kilnd with --cache-redis, Redis flushed before each call: compile, then SET;
  hit     a second kilnd with --cache-redis answering what the first stored: GET, verify, reply.
Model: MobileNetV2 from bench/model_zoo.py (its default artifacts, a few MB).

usage: KILN_KILND=build/service/kilnd PYTHONPATH=build/python \\
         /usr/bin/python3 bench/shared_cache_bench.py [--runs N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402
from kiln.v1 import compiler_pb2 as pb  # noqa: E402
from kiln.v1 import compiler_pb2_grpc as rpc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_redis(directory):
    socket = os.path.join(directory, "redis.sock")
    process = subprocess.Popen(
        ["/usr/bin/redis-server", "--port", "0", "--unixsocket", socket, "--save", "",
         "--appendonly", "no", "--dir", directory], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if os.path.exists(socket) and cli(socket, "PING").startswith("PONG"):
            return process, socket
        time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def cli(socket, *args):
    return subprocess.run(["/usr/bin/redis-cli", "-s", socket, *args], capture_output=True,
                          text=True, timeout=30).stdout


def start_kilnd(*flags):
    kilnd = os.environ.get("KILN_KILND", os.path.join(ROOT, "build/service/kilnd"))
    process = subprocess.Popen(
        [kilnd, "--listen=127.0.0.1:0", "--metrics-listen=", "--cache-bytes=0", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    address = process.stdout.readline().decode().split("grpc=")[1].split()[0]
    channel = grpc.insecure_channel(address, options=[
        ("grpc.max_receive_message_length", 512 << 20),
        ("grpc.max_send_message_length", 512 << 20)])
    return process, rpc.CompilerStub(channel)


def timed(stub, request, before=None):
    times = []
    for _ in range(RUNS):
        if before:
            before()
        start = time.perf_counter()
        response = stub.Compile(request, timeout=600)
        times.append(time.perf_counter() - start)
    return statistics.median(times), response


def main():
    global RUNS
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    RUNS = parser.parse_args().runs
    builder, output = model_zoo.mobilenetv2()
    request = pb.CompileRequest(onnx=builder.model(output).SerializeToString(), name="mobilenetv2")
    with tempfile.TemporaryDirectory(prefix="kiln_shared_cache_bench_") as directory:
        redis, socket = start_redis(directory)
        shared = f"--cache-redis=unix:{socket}"
        processes = []
        try:
            plain_process, plain = start_kilnd()
            miss_process, miss = start_kilnd(shared)
            hit_process, hit = start_kilnd(shared)
            processes = [plain_process, miss_process, hit_process]
            plain.Compile(request, timeout=600)  # warm-up (page cache, LLVM's first use)
            t_plain, _ = timed(plain, request)
            t_miss, stored = timed(miss, request, before=lambda: cli(socket, "FLUSHALL"))
            t_hit, answered = timed(hit, request)
            assert answered == stored, "a Redis hit returned other bytes than the compile"
            size = sum(len(a.content) for a in stored.artifacts)
        finally:
            for process in processes:
                process.terminate()
                process.wait()
            redis.kill()
            redis.wait()
    print(f"MobileNetV2 Compile, median of {RUNS} (response {size / 2**20:.1f} MiB):")
    print(f"  plain compile (no Redis)           {t_plain * 1000:8.1f} ms  1.00")
    print(f"  Redis miss (compile, then SET)      {t_miss * 1000:8.1f} ms  {t_miss / t_plain:.2f}")
    print(f"  Redis hit on another replica        {t_hit * 1000:8.1f} ms  {t_hit / t_plain:.3f}")


if __name__ == "__main__":
    main()
