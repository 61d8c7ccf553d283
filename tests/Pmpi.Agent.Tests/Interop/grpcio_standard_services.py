"""Asks a PMPI daemon what standard gRPC tooling asks, with grpcio, the reference implementation: a health check of
the server and of each service named, then the reflection listing of its services, printed on one line.

Usage: grpcio_standard_services.py GENERATED_DIR HOST:PORT SERVICE...
"""
import sys

import grpc

sys.path.insert(0, sys.argv[1])
import standard_services_pb2 as messages  # noqa: E402 (protoc wrote it to the directory above)

TIMEOUT = 20
SERVING = 1

channel = grpc.insecure_channel(sys.argv[2])
check = channel.unary_unary("/grpc.health.v1.Health/Check",
                            request_serializer=messages.HealthCheckRequest.SerializeToString,
                            response_deserializer=messages.HealthCheckResponse.FromString)
for service in [""] + sys.argv[3:]:
    status = check(messages.HealthCheckRequest(service=service), timeout=TIMEOUT).status
    if status != SERVING:
        sys.exit(f"health of '{service}' is {status}, not SERVING")
    print(f"HEALTH '{service}' SERVING", flush=True)

reflect = channel.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                                request_serializer=messages.ServerReflectionRequest.SerializeToString,
                                response_deserializer=messages.ServerReflectionResponse.FromString)
replies = list(reflect(iter([messages.ServerReflectionRequest(list_services="")]), timeout=TIMEOUT))
names = sorted(service.name for service in replies[0].list_services_response.service)
print("SERVICES " + " ".join(names), flush=True)
