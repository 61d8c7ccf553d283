namespace Pmpi.Classic.Tests;

/// <summary>MPI error classes, codes and strings for the exceptions the classic face raises.</summary>
public sealed class ErrorTests
{
    private static readonly EnvironmentOptions Bounded = new() { Timeout = TimeSpan.FromSeconds(30) };

    [Fact]
    public void MPI_Error_class_CaughtTruncationAndCountError_NameTheirClasses()
    {
        (int Truncate, int Count, string Text) observed = default;
        Environment.Run(2, _ =>
        {
            MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
            var buffer = new int[4];
            if (rank == 0)
            {
                MPI_Send(buffer, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
                return;
            }
            var truncated = Assert.ThrowsAny<MpiException>(() => MPI_Recv(buffer, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            var count = Assert.Throws<MpiException>(() => MPI_Send(buffer, 5, MPI_INT, 0, 0, MPI_COMM_WORLD));
            MPI_Error_class(truncated, out int truncateClass);
            MPI_Error_class(count, out int countClass);
            MPI_Error_string(truncateClass, out string text, out int length);
            Assert.Equal(text.Length, length);
            observed = (truncateClass, countClass, text);
        }, Bounded);

        Assert.Equal((MPI_ERR_TRUNCATE, MPI_ERR_COUNT), (observed.Truncate, observed.Count));
        Assert.Equal(14, MPI_ERR_TRUNCATE);
        Assert.StartsWith("Message truncated", observed.Text);
    }

    [Fact]
    public void MPI_Error_class_EveryErrorClass_MapsToAKnownCodeWithAString()
    {
        foreach (var errorClass in Enum.GetValues<ErrorClass>())
        {
            MPI_Error_class(new MpiException(errorClass, "test"), out int code);
            MPI_Error_class(code, out int again);
            MPI_Error_string(code, out string text, out _);
            Assert.Equal(code, again);
            Assert.NotEqual(MPI_SUCCESS, code);
            Assert.False(string.IsNullOrEmpty(text));
        }
    }

    [Fact]
    public void MPI_Error_class_InvalidRequest_IsMpichsMpiErrRequest()
    {
        MPI_Error_class(new MpiException(ErrorClass.InvalidRequest, "test"), out int code);
        MPI_Error_string(code, out string text, out _);

        Assert.Equal((MPI_ERR_REQUEST, 19), (code, MPI_ERR_REQUEST));
        Assert.StartsWith("Invalid request", text);
    }

    [Fact]
    public void MPI_Error_string_UnknownCode_ThrowsInvalidArgument()
    {
        var error = Assert.Throws<MpiException>(() => MPI_Error_string(9999, out _, out _));

        Assert.Equal(ErrorClass.InvalidArgument, error.ErrorClass);
        Assert.Contains("MPI_Error_string: 9999 is not an MPI error code", error.Message);
    }
}
