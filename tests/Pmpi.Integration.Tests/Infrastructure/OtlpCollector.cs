using System.Net;
using System.Text;
using System.Threading.Channels;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// A collector that receives what OpenTelemetry's OTLP exporter sends over HTTP (http/protobuf, POST /v1/metrics) on
/// loopback, and keeps each request's body: an ExportMetricsServiceRequest, whose names and string attributes are
/// UTF-8 within it.
/// </summary>
internal sealed class OtlpCollector : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly Channel<byte[]> _exports = Channel.CreateUnbounded<byte[]>();

    private OtlpCollector(WebApplication app, Uri address)
    {
        _app = app;
        Address = address;
    }

    /// <summary>Where the exporter sends (OTEL_EXPORTER_OTLP_ENDPOINT).</summary>
    public Uri Address { get; }

    public static async Task<OtlpCollector> StartAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0, listen => listen.Protocols = HttpProtocols.Http1AndHttp2));
        var app = builder.Build();
        OtlpCollector? collector = null;
        app.MapPost("/v1/metrics", async context =>
        {
            using var body = new MemoryStream();
            await context.Request.Body.CopyToAsync(body, context.RequestAborted);
            collector!._exports.Writer.TryWrite(body.ToArray());
            // An empty ExportMetricsServiceResponse: everything accepted.
            context.Response.ContentType = "application/x-protobuf";
        });
        await app.StartAsync();
        collector = new OtlpCollector(app, new Uri(app.Urls.First()));
        return collector;
    }

    /// <summary>Waits for an export whose text holds every one of <paramref name="texts"/>; fails naming the missing ones at the timeout.</summary>
    public async Task WaitForExportHoldingAsync(TimeSpan timeout, params string[] texts)
    {
        using var deadline = new CancellationTokenSource(timeout);
        var missing = texts;
        try
        {
            while (true)
            {
                var export = Encoding.UTF8.GetString(await _exports.Reader.ReadAsync(deadline.Token));
                missing = [.. texts.Where(text => !export.Contains(text, StringComparison.Ordinal))];
                if (missing.Length == 0) return;
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"No export within {timeout} held {string.Join(", ", missing)}.");
        }
    }

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();
}
