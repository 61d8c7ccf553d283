"""Shared by the grpcio interop scripts: loads the messages protoc generated from proto/pmpi/v1."""
import os
import sys

MAX_MESSAGE = 64 * 1024 * 1024

# Large messages both ways, and never a proxy: the peer is on loopback.
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE),
    ("grpc.max_receive_message_length", MAX_MESSAGE),
    ("grpc.enable_http_proxy", 0),
]


def load_messages(generated_dir):
    """Imports agent_pb2, master_pb2 and transport_pb2 from the directory protoc wrote them to."""
    sys.path.insert(0, os.path.abspath(generated_dir))
    from pmpi.v1 import agent_pb2, master_pb2, transport_pb2  # noqa: E402 (needs the path above)
    return agent_pb2, master_pb2, transport_pb2


def check(condition, what):
    """Fails the script with a message the .NET test shows."""
    if not condition:
        raise AssertionError(what)
