"""A grpcio client asking a PMPI agent for its node: python3 get_node_info.py GENERATED_DIR HOST:PORT CREDENTIALS_DIR

Speaks mutual TLS with the cluster credential in CREDENTIALS_DIR (ca.crt, node.crt, node.key). Prints the NodeInfo
reply as one JSON object (protobuf's own JSON mapping, field names as in agent.proto).
"""
import os
import sys

import grpc
from google.protobuf import json_format

sys.path.insert(0, os.path.abspath(sys.argv[1]))
from pmpi.v1 import agent_pb2  # noqa: E402 (needs the path above)

def read(name):
    with open(os.path.join(sys.argv[3], name), "rb") as file:
        return file.read()


credentials = grpc.ssl_channel_credentials(root_certificates=read("ca.crt"), private_key=read("node.key"), certificate_chain=read("node.crt"))
# The agent is on loopback: a proxy from the environment would only get in the way.
with grpc.secure_channel(sys.argv[2], credentials, options=[("grpc.enable_http_proxy", 0)]) as channel:
    get_node_info = channel.unary_unary("/pmpi.v1.Agent/GetNodeInfo",
                                        request_serializer=agent_pb2.NodeInfoRequest.SerializeToString,
                                        response_deserializer=agent_pb2.NodeInfo.FromString)
    info = get_node_info(agent_pb2.NodeInfoRequest(), timeout=20)
    print(json_format.MessageToJson(info, preserving_proto_field_name=True, indent=None), flush=True)
