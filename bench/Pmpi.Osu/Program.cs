// The OSU micro-benchmarks over PMPI: `pmpi run -n 2 Pmpi.Osu.dll latency [options]` runs OMB 7.4's osu_latency
// with OMB's sizes, iteration and warm-up counts, options and output, so its table compares line by line with the
// native osu_latency's on the same machines (`--no-tag-output` leaves rank 0's lines as it wrote them).
//   latency    osu_latency     ping-pong between ranks 0 and 1, half the round trip (us)
//   bw         osu_bw          windows of 64 nonblocking sends from rank 0 to rank 1 (MB/s)
//   bibw       osu_bibw        windows of 64 nonblocking sends each way at once (MB/s)
//   mbw_mr     osu_mbw_mr      windows between N/2 pairs at once: bandwidth (MB/s) and message rate
//   allreduce  osu_allreduce   MPI_Allreduce of bytes over every rank (us)
//   bcast      osu_bcast       MPI_Bcast from rank 0 (us)
//   alltoall   osu_alltoall    MPI_Alltoall (us)
// Options, as OMB's: -m [MIN:]MAX, -i ITER, -x ITER (warm-up), -W SIZE (bw, bibw, mbw_mr), -R 0|1 (mbw_mr),
// -f (full: min, max, iterations) and -M SIZE (collectives), -h, -v. Run directly, with --pmpi-ranks N, the ranks
// are threads of this process.
using Pmpi.Osu;
using Environment = Pmpi.Environment;

int exitCode = 0;
Environment.Run(ref args, world =>
{
    int code = OsuProgram.Run(world, args, Console.Out, Console.Error);
    // Every rank reaches the same code; ranks run as threads share this variable.
    Interlocked.CompareExchange(ref exitCode, code, 0);
});
return exitCode;
