using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Pmpi.Tests.Shared;

/// <summary>A logger provider that keeps every line it is given (category, event name, message), for tests that count a daemon's log.</summary>
public sealed class RecordingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<(string Category, string Event, string Message)> _lines = new();

    /// <summary>Every line logged so far, oldest first.</summary>
    public IReadOnlyList<(string Category, string Event, string Message)> Lines => [.. _lines];

    public ILogger CreateLogger(string categoryName) => new Recorder(categoryName, _lines);

    public void Dispose()
    {
    }

    private sealed class Recorder(string category, ConcurrentQueue<(string, string, string)> lines) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            lines.Enqueue((category, eventId.Name ?? "", formatter(state, exception)));
    }
}
