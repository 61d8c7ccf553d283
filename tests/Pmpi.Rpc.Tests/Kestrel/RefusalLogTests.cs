using System.Net;
using Microsoft.Extensions.Logging;
using Pmpi.Rpc.Kestrel.Internal;

namespace Pmpi.Rpc.Tests.Kestrel;

/// <summary>Refusals reach the log once per address, kind and interval; the rest as one count when the interval ends.</summary>
public sealed class RefusalLogTests : IDisposable
{
    private const string Unauthenticated = "calls (Unauthenticated)";
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(10);
    private static readonly IPAddress Attacker = IPAddress.Parse("10.0.0.5");

    private readonly ManualTime _time = new();
    private readonly RecordingLoggerProvider _log = new();
    private readonly ILoggerFactory _loggers;

    public RefusalLogTests() => _loggers = LoggerFactory.Create(logging => logging.AddProvider(_log));

    public void Dispose() => _loggers.Dispose();

    [Fact]
    public void ShouldLog_OneAddressRefusedAHundredTimes_FirstInFullThenOneCountWhenTheIntervalEnds()
    {
        using var refusals = new RefusalLog(_loggers, _time, Interval);

        var logged = Enumerable.Range(0, 100).Select(_ => refusals.ShouldLog(Attacker, Unauthenticated)).ToList();
        _time.Advance(Interval);

        Assert.Equal([true, .. Enumerable.Repeat(false, 99)], logged);
        Assert.Equal(["Refused 99 more calls (Unauthenticated) from 10.0.0.5 in the last 10 s"], _log.Lines.Select(line => line.Message));
    }

    [Fact]
    public void ShouldLog_OtherAddressOrKind_EachLoggedInFull()
    {
        using var refusals = new RefusalLog(_loggers, _time, Interval);
        refusals.ShouldLog(Attacker, Unauthenticated);

        bool otherKind = refusals.ShouldLog(Attacker, "TLS handshakes");
        bool otherAddress = refusals.ShouldLog(IPAddress.Parse("10.0.0.6"), Unauthenticated);
        bool sameAsMapped = refusals.ShouldLog(Attacker.MapToIPv6(), Unauthenticated);

        Assert.True(otherKind);
        Assert.True(otherAddress);
        Assert.False(sameAsMapped);
    }

    [Fact]
    public void ShouldLog_AfterTheInterval_LoggedInFullAgainAndNoCountForASingleRefusal()
    {
        using var refusals = new RefusalLog(_loggers, _time, Interval);
        refusals.ShouldLog(Attacker, Unauthenticated);

        _time.Advance(Interval);
        bool again = refusals.ShouldLog(Attacker, Unauthenticated);

        Assert.True(again);
        Assert.Empty(_log.Lines);
    }

    [Fact]
    public void ShouldLog_MoreAddressesThanWindows_OldestClosedAndItsCountReported()
    {
        using var refusals = new RefusalLog(_loggers, _time, Interval, maxWindows: 2);
        refusals.ShouldLog(Attacker, Unauthenticated);
        refusals.ShouldLog(Attacker, Unauthenticated);
        refusals.ShouldLog(IPAddress.Parse("10.0.0.6"), Unauthenticated);

        bool third = refusals.ShouldLog(IPAddress.Parse("10.0.0.7"), Unauthenticated);

        Assert.True(third);
        Assert.Equal(["Refused 1 more calls (Unauthenticated) from 10.0.0.5 in the last 10 s"], _log.Lines.Select(line => line.Message));
    }

    [Fact]
    public void Dispose_OpenWindowWithCounts_Reported()
    {
        var refusals = new RefusalLog(_loggers, _time, Interval);
        refusals.ShouldLog(Attacker, Unauthenticated);
        refusals.ShouldLog(Attacker, Unauthenticated);

        refusals.Dispose();

        Assert.Single(_log.Lines);
    }
}
