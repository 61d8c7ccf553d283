namespace Pmpi.Rpc.Routing;

/// <summary>Where one rank of a job runs, as its rank table entry says: what every route to it is decided from.</summary>
/// <param name="Rank">The world rank.</param>
/// <param name="Node">The node it runs on.</param>
/// <param name="Domain">Its administrative domain; empty when the computation declares none.</param>
/// <param name="Endpoint">Its RankTransport endpoint (http://host:port); empty until it has registered.</param>
/// <param name="Gateway">Its domain's gateway (http://host:port); empty when the domain has none.</param>
public sealed record RankPlace(int Rank, string Node, string Domain, string Endpoint, string Gateway)
{
    /// <summary>The SHA-256 of its endpoint's TLS certificate, which a direct route pins; empty when it speaks h2c.</summary>
    public byte[] CertificatePin { get; init; } = [];

    /// <summary>
    /// The machine it runs on, as a key: its node within its domain, since two domains may both name a node "n1".
    /// </summary>
    public string Machine => $"{Domain}\0{Node}";

    /// <summary>How messages name the domain: quoted, or "no domain".</summary>
    public string DomainName => Domain.Length == 0 ? "no domain" : $"domain '{Domain}'";
}
