using Pmpi.Agent.Computation;

namespace Pmpi.Agent.Tests.Computation;

/// <summary>mpirun's host lists: -H host[:slots],... and Open MPI's hostfile.</summary>
public class HostListTests
{
    [Fact]
    public void ParseHosts_ListsWithAndWithoutSlots_CountOnePerListingAndAddUpRepeats()
    {
        var hosts = HostList.ParseHosts(["a:2,b", "a,[fd00::2]:3,10.0.0.1"]);

        Assert.Equal(
            [new HostSlots("a", 7300, 3), new HostSlots("b", 7300, 1), new HostSlots("[fd00::2]", 7300, 3), new HostSlots("10.0.0.1", 7300, 1)],
            hosts);
    }

    [Theory]
    [InlineData("a:0", "'0' is not a number of slots")]
    [InlineData("a:two", "'two' is not a number of slots")]
    [InlineData("a,,b", "'' is not a host name or address")]
    [InlineData("user@a", "'user@a' is not a host name or address")]
    public void ParseHosts_BadItem_FailsNamingIt(string list, string expected)
    {
        var error = Assert.Throws<FormatException>(() => HostList.ParseHosts([list]));

        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
        Assert.StartsWith("-H ", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ParseFile_OpenMpiHostfile_ReadsHostsSlotsAndPortsSkippingCommentsAndBlankLines()
    {
        const string text = "# the cluster\r\n\r\nnode1 slots=4 max_slots=8   # login node\r\nnode2\n  node3 slots=2 port=7301\nnode2\n";

        var hosts = HostList.ParseFile(text, "hosts");

        Assert.Equal([new HostSlots("node1", 7300, 4), new HostSlots("node2", 7300, 2), new HostSlots("node3", 7301, 2)], hosts);
    }

    [Fact]
    public void ParseFile_HostWithoutSlots_LeavesThemUnsaid()
    {
        var hosts = HostList.ParseFile("localhost\n", "hosts");

        Assert.Equal([new HostSlots("localhost", 7300, null)], hosts);
    }

    [Theory]
    [InlineData("a slots=2\nb slots=0\n", "hosts(2): error: 'slots=0': slots takes a number (1 or more).")]
    [InlineData("a\n\n# c\nb cpus=4\n", "hosts(4): error: 'cpus=4' is not slots=N, max_slots=N or port=N.")]
    [InlineData("a port=70000\n", "hosts(1): error: 'port=70000': port takes a number (1-65535).")]
    [InlineData("a\nb slots\n", "hosts(2): error: 'slots' is not slots=N, max_slots=N or port=N.")]
    [InlineData("a\nnode_1:2\n", "hosts(2): error: 'node_1:2' is not a host name or address.")]
    [InlineData("# nothing here\n", "hosts(2): error: the hostfile names no host.")]
    public void ParseFile_BadLine_FailsNamingFileAndLine(string text, string expected)
    {
        var error = Assert.Throws<FormatException>(() => HostList.ParseFile(text, "hosts"));

        Assert.Equal(expected, error.Message);
    }
}
