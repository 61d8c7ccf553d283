using Pmpi.Agent.Computation;

namespace Pmpi.Agent.Tests.Computation;

/// <summary>A Slurm allocation read from its environment: hostlist expressions and per-node counts.</summary>
public class SlurmAllocationTests
{
    [Theory]
    [InlineData("vm", "vm")]
    [InlineData("node[01-04,07]", "node01 node02 node03 node04 node07")]
    [InlineData("a,b[8-10],c", "a b8 b9 b10 c")]
    [InlineData("n[1-2]-ib,login.cluster", "n1-ib n2-ib login.cluster")]
    [InlineData("rack[1-2]-n[09-10]", "rack1-n09 rack1-n10 rack2-n09 rack2-n10")]
    [InlineData("n[001,3]", "n001 n3")]
    public void ExpandHostList_Expression_ListsEveryHostInOrder(string expression, string expected)
    {
        Assert.Equal(expected.Split(' '), SlurmAllocation.ExpandHostList(expression, "SLURM_JOB_NODELIST"));
    }

    [Theory]
    [InlineData("node[01-04", "'[' without ']'")]
    [InlineData("node01]", "']' without '['")]
    [InlineData("node[1-[2]]", "'[' inside brackets")]
    [InlineData("node[4-1]", "the range '4-1' ends before it starts")]
    [InlineData("node[a-b]", "'[a-b]' holds 'a-b', not a number or a range")]
    [InlineData("node[1--2]", "holds '1--2'")]
    [InlineData("a,,b", "an empty host name")]
    [InlineData("user@a", "'user@a' is not a host name")]
    [InlineData("n[0-99999999]", "more than 65536 hosts")]
    public void ExpandHostList_Malformed_FailsNamingTheVariableAndWhy(string expression, string expected)
    {
        var error = Assert.Throws<FormatException>(() => SlurmAllocation.ExpandHostList(expression, "SLURM_JOB_NODELIST"));

        Assert.StartsWith($"SLURM_JOB_NODELIST={expression} is not a Slurm hostlist expression", error.Message, StringComparison.Ordinal);
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("4", "4")]
    [InlineData("2(x3),1", "2 2 2 1")]
    [InlineData("72(x2),36", "72 72 36")]
    public void ExpandCounts_SlurmForm_RepeatsEachCount(string text, string expected)
    {
        Assert.Equal(expected.Split(' ').Select(int.Parse), SlurmAllocation.ExpandCounts(text, "SLURM_TASKS_PER_NODE"));
    }

    [Theory]
    [InlineData("0")]
    [InlineData("2(x0)")]
    [InlineData("2(3)")]
    [InlineData("2(x3")]
    [InlineData("two")]
    [InlineData("2,,1")]
    public void ExpandCounts_Malformed_FailsNamingTheVariable(string text)
    {
        var error = Assert.Throws<FormatException>(() => SlurmAllocation.ExpandCounts(text, "SLURM_TASKS_PER_NODE"));

        Assert.StartsWith($"SLURM_TASKS_PER_NODE={text}: '", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Read_Allocation_NodesWithTheirTasksAsSlots()
    {
        var environment = new Dictionary<string, string>
        {
            ["SLURM_JOB_ID"] = "42", ["SLURM_JOB_NODELIST"] = "n[1-3],m7", ["SLURM_TASKS_PER_NODE"] = "2(x3),1", ["SLURM_JOB_CPUS_PER_NODE"] = "8(x4)",
        };

        var allocation = SlurmAllocation.Read(environment.GetValueOrDefault);

        Assert.NotNull(allocation);
        Assert.Equal("42", allocation.JobId);
        Assert.Equal([new HostSlots("n1", 7300, 2), new HostSlots("n2", 7300, 2), new HostSlots("n3", 7300, 2), new HostSlots("m7", 7300, 1)], allocation.Nodes);
        Assert.Equal(7, allocation.Slots);
        Assert.Equal("SLURM_JOB_ID=42, SLURM_JOB_NODELIST=n[1-3],m7, SLURM_TASKS_PER_NODE=2(x3),1", allocation.Description);
    }

    [Fact]
    public void Read_WithoutTasksPerNode_TakesTheCpusPerNode()
    {
        var environment = new Dictionary<string, string> { ["SLURM_JOB_ID"] = "7", ["SLURM_NODELIST"] = "vm", ["SLURM_JOB_CPUS_PER_NODE"] = "2" };

        var allocation = SlurmAllocation.Read(environment.GetValueOrDefault);

        Assert.Equal([new HostSlots("vm", 7300, 2)], allocation!.Nodes);
        Assert.Equal("SLURM_JOB_ID=7, SLURM_NODELIST=vm, SLURM_JOB_CPUS_PER_NODE=2", allocation.Description);
    }

    [Fact]
    public void Read_OutsideAnAllocation_IsNull()
    {
        Assert.Null(SlurmAllocation.Read(new Dictionary<string, string> { ["SLURM_JOB_NODELIST"] = "vm" }.GetValueOrDefault));
        Assert.Null(SlurmAllocation.Read(new Dictionary<string, string> { ["SLURM_JOB_ID"] = "7" }.GetValueOrDefault));
    }

    [Theory]
    [InlineData("n[1-3]", "2(x2)", "SLURM_TASKS_PER_NODE=2(x2) gives 2 nodes their slots, but SLURM_JOB_NODELIST=n[1-3] names 3.")]
    [InlineData("n[1-3]", null, "SLURM_JOB_NODELIST=n[1-3] is set but neither SLURM_TASKS_PER_NODE nor SLURM_JOB_CPUS_PER_NODE is")]
    public void Read_SlotsNotMatchingNodes_FailsNamingBothVariables(string list, string? tasks, string expected)
    {
        var environment = new Dictionary<string, string> { ["SLURM_JOB_ID"] = "7", ["SLURM_JOB_NODELIST"] = list };
        if (tasks is not null) environment["SLURM_TASKS_PER_NODE"] = tasks;

        var error = Assert.Throws<FormatException>(() => SlurmAllocation.Read(environment.GetValueOrDefault));

        Assert.StartsWith(expected, error.Message, StringComparison.Ordinal);
    }
}
