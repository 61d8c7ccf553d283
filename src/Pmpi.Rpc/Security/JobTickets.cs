using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Security;

/// <summary>
/// Job tickets and job keys (docs/security.md): a master signs each job's <see cref="JobTicket"/> with HMAC-SHA256
/// under the cluster key; an agent launches only what a valid, unexpired ticket names for it. Master and agents
/// derive the job's key from the cluster key and the ticket's job id and nonce with HKDF-SHA256, so each ticket of
/// a job (one per world: the first, and each spawned one) gives the same key; ranks prove their membership with it,
/// compared in constant time.
/// </summary>
public static class JobTickets
{
    /// <summary>The most ranks a job may have, over all its worlds.</summary>
    public const int MaxJobRanks = 1024 * 1024;

    /// <summary>How long after issue a ticket still launches: 2 minutes (the master launches at once).</summary>
    public static readonly TimeSpan Lifetime = TimeSpan.FromMinutes(2);

    private static readonly byte[] JobKeyInfo = "pmpi/v1 job key"u8.ToArray();

    /// <summary>A ticket for <paramref name="jobId"/> valid for <see cref="Lifetime"/>, with a fresh nonce; add the agents' ranks before signing.</summary>
    public static JobTicket Create(string jobId, int worldSize) => new()
    {
        JobId = jobId,
        WorldSize = worldSize,
        ExpiresUnixMs = (DateTimeOffset.UtcNow + Lifetime).ToUnixTimeMilliseconds(),
        Nonce = ByteString.CopyFrom(RandomNumberGenerator.GetBytes(16)),
    };

    /// <summary>
    /// A ticket for a world that ranks of <paramref name="job"/>'s job spawned: the job's id and nonce (so the same
    /// job key) and its staged programs, valid for <see cref="Lifetime"/> from now; add the agents' ranks before signing.
    /// </summary>
    public static JobTicket CreateSpawned(JobTicket job, int worldFirst, int worldSize)
    {
        ArgumentNullException.ThrowIfNull(job);
        return new JobTicket
        {
            JobId = job.JobId,
            WorldFirst = worldFirst,
            WorldSize = worldSize,
            ExpiresUnixMs = (DateTimeOffset.UtcNow + Lifetime).ToUnixTimeMilliseconds(),
            Nonce = job.Nonce,
            // A staged rank spawns files of its own staged program, which its world's launch carries.
            Staged = { job.Staged },
        };
    }

    /// <summary>The ticket's bytes and their signature under <paramref name="security"/>'s cluster key.</summary>
    public static (ByteString Ticket, ByteString Signature) Sign(RpcSecurity security, JobTicket ticket)
    {
        ArgumentNullException.ThrowIfNull(security);
        ArgumentNullException.ThrowIfNull(ticket);
        var bytes = ticket.ToByteArray();
        return (ByteString.CopyFrom(bytes), ByteString.CopyFrom(HMACSHA256.HashData(security.TicketKey, bytes)));
    }

    /// <summary>
    /// Checks a ticket's signature (in constant time) and expiry. <paramref name="failure"/> says what was wrong;
    /// the caller checks what the ticket names.
    /// </summary>
    public static bool TryVerify(RpcSecurity security, ByteString ticket, ByteString signature, [NotNullWhen(true)] out JobTicket? verified, out string failure)
    {
        ArgumentNullException.ThrowIfNull(security);
        ArgumentNullException.ThrowIfNull(ticket);
        ArgumentNullException.ThrowIfNull(signature);
        verified = null;
        if (ticket.IsEmpty)
        {
            failure = "the launch carries no job ticket";
            return false;
        }
        if (!CryptographicOperations.FixedTimeEquals(HMACSHA256.HashData(security.TicketKey, ticket.Span), signature.Span))
        {
            failure = "the job ticket's signature is not this cluster's (altered, or signed with another key)";
            return false;
        }
        JobTicket parsed;
        try
        {
            parsed = JobTicket.Parser.ParseFrom(ticket);
        }
        catch (InvalidProtocolBufferException)
        {
            failure = "the job ticket is malformed";
            return false;
        }
        if (DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() > parsed.ExpiresUnixMs)
        {
            failure = $"the job ticket of job {parsed.JobId} expired at {DateTimeOffset.FromUnixTimeMilliseconds(parsed.ExpiresUnixMs):u}";
            return false;
        }
        verified = parsed;
        failure = "";
        return true;
    }

    /// <summary>The job key of <paramref name="ticket"/>'s job, in base64: what ranks present as their job token.</summary>
    public static string JobToken(RpcSecurity security, JobTicket ticket)
    {
        ArgumentNullException.ThrowIfNull(security);
        ArgumentNullException.ThrowIfNull(ticket);
        byte[] job = [.. Encoding.UTF8.GetBytes(ticket.JobId), 0, .. ticket.Nonce.Span];
        Span<byte> key = stackalloc byte[32];
        HKDF.DeriveKey(HashAlgorithmName.SHA256, security.TicketKey, key, salt: SHA256.HashData(job), info: JobKeyInfo);
        return Convert.ToBase64String(key);
    }

    /// <summary>Whether a presented job token is the expected one, compared in constant time.</summary>
    public static bool TokenMatches(string expected, string presented)
    {
        ArgumentNullException.ThrowIfNull(expected);
        ArgumentNullException.ThrowIfNull(presented);
        return CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(expected), Encoding.UTF8.GetBytes(presented));
    }
}
