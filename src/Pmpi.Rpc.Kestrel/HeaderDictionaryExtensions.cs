using Microsoft.AspNetCore.Http;

namespace Pmpi.Rpc.Kestrel;

/// <summary>ASP.NET Core's request headers in the shape the route contract reads them (RouteProof, ControlRoute).</summary>
public static class HeaderDictionaryExtensions
{
    /// <summary>A header's value by name, its values joined by commas; empty when the request has none.</summary>
    public static Func<string, string> Lookup(this IHeaderDictionary headers)
    {
        ArgumentNullException.ThrowIfNull(headers);
        return name => headers[name].ToString();
    }
}
