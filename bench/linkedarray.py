# Motor's LinkedArray ping-pong with mpi4py's pickle-based send/recv: ranks 0 and 1 bounce a linked list of N nodes,
# each holding an int array (array.array('i')), 4096 ints in all. The same as `Pmpi.Bench linkedarray`; rank 0 prints
# "nodes<TAB>half_rtt_us" per list.
#   mpirun -np 2 python3 bench/linkedarray.py [iterations]
import array
import sys

from mpi4py import MPI

TOTAL_INTS = 4096


class Node:
    def __init__(self, values, next_node):
        self.values = values
        self.next = next_node


def build(nodes):
    head = None
    per_node = TOTAL_INTS // nodes
    for i in range(nodes - 1, -1, -1):
        head = Node(array.array("i", range(i * per_node, (i + 1) * per_node)), head)
    return head


def check(head, nodes):
    expected, count = 0, 0
    node = head
    while node is not None:
        for value in node.values:
            if value != expected:
                raise RuntimeError(f"the list came back changed at value {expected}")
            expected += 1
        node = node.next
        count += 1
    if count != nodes or expected != TOTAL_INTS:
        raise RuntimeError(f"the list came back with {count} nodes and {expected} values")


def main():
    # 4096 nodes make a deep object graph: pickle recurses once per node.
    sys.setrecursionlimit(100000)
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    for nodes in (256, 4096):
        data = build(nodes)
        warm = iterations // 10
        t0 = 0.0
        for i in range(iterations + warm):
            if i == warm:
                comm.Barrier()
                t0 = MPI.Wtime()
            if rank == 0:
                comm.send(data, dest=1, tag=0)
                data = comm.recv(source=1, tag=0)
            else:
                data = comm.recv(source=0, tag=0)
                comm.send(data, dest=0, tag=0)
        half = (MPI.Wtime() - t0) / iterations / 2
        if rank == 0:
            check(data, nodes)
            print(f"{nodes}\t{half * 1e6:.1f}", flush=True)


main()
