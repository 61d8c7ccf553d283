"""Calls a PMPI agent's methods with raw protobuf bytes and no credential, as a local attacker would:
python3 attack_agent.py HOST:PORT METHOD=HEX_REQUEST ...

Prints one line per call: "METHOD STATUS_CODE_NUMBER DETAILS".
"""
import sys

import grpc

with grpc.insecure_channel(sys.argv[1], options=[("grpc.enable_http_proxy", 0)]) as channel:
    for argument in sys.argv[2:]:
        method, request = argument.split("=", 1)
        streaming = method.endswith("/Launch") or method.endswith("/Submit")
        call = channel.unary_stream(method) if streaming else channel.unary_unary(method)
        try:
            result = call(bytes.fromhex(request), timeout=20)
            if streaming:
                list(result)
            print(f"{method} 0 accepted", flush=True)
        except grpc.RpcError as error:
            print(f"{method} {error.code().value[0]} {error.details()}", flush=True)
