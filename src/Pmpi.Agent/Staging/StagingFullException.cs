namespace Pmpi.Agent.Staging;

/// <summary>What a job ships does not fit in an agent's staging store beside what running jobs hold; the message says how much.</summary>
internal sealed class StagingFullException(string message) : Exception(message);
