using System.Globalization;
using System.Text;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// One PMI command or response: its name (the value of <c>cmd=</c>) and its attributes in order, in either wire
/// form. PMI-1 (MPICH's simple PMI, <c>src/pmi/simple</c>) is a line: <c>cmd=put kvsname=K key=k value=v\n</c>,
/// attributes separated by spaces, so no value may hold a space. PMI-2 (MPICH's <c>PMI_v2_Wire_Protocol</c>, Slurm's
/// <c>src/plugins/mpi/pmi2</c>) is a 6-character decimal length, then <c>cmd=kvs-put;key=k;value=v;</c>, each
/// attribute ended by a semicolon, so no value may hold one. MPICH pads the length on the left (<c>"%6u"</c>),
/// Slurm on the right (<c>"%-6d"</c>); both are read.
/// </summary>
internal sealed class PmiCommand
{
    /// <summary>The longest PMI-2 command: what six decimal digits can state.</summary>
    public const int MaxLength = 999_999;

    private readonly List<KeyValuePair<string, string>> _attributes;

    /// <param name="name">The command's name, e.g. <c>put</c> or <c>kvs-fence</c>.</param>
    /// <param name="attributes">Its attributes, in the order they go on the wire.</param>
    public PmiCommand(string name, params IEnumerable<KeyValuePair<string, string>> attributes)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        Name = name;
        _attributes = [.. attributes];
    }

    /// <summary>The command's name.</summary>
    public string Name { get; }

    /// <summary>The value of attribute <paramref name="key"/>, or null when the command has none.</summary>
    public string? this[string key]
    {
        get
        {
            foreach (var (name, value) in _attributes)
            {
                if (name == key) return value;
            }
            return null;
        }
    }

    /// <summary>Shorthand for one attribute.</summary>
    public static KeyValuePair<string, string> Attribute(string key, string value) => new(key, value);

    /// <summary>Shorthand for an integer attribute.</summary>
    public static KeyValuePair<string, string> Attribute(string key, int value) => new(key, value.ToString(CultureInfo.InvariantCulture));

    /// <summary>The integer attribute <paramref name="key"/>.</summary>
    /// <exception cref="MpiException">Transport: it is missing or not an integer; the message names the command.</exception>
    public int Integer(string key) =>
        int.TryParse(this[key], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value) ? value
        : throw new MpiException(ErrorClass.Transport, $"The PMI server's '{Name}' has no integer '{key}': {this}");

    /// <summary>Whether the server reported success: no <c>rc</c>, or <c>rc=0</c>.</summary>
    public bool Succeeded => this["rc"] is null or "0";

    /// <summary>The server's reason for a failure: PMI-2's <c>errmsg</c> or PMI-1's <c>msg</c>.</summary>
    public string? Reason => this["errmsg"] ?? this["msg"];

    /// <summary>The PMI-1 line, newline included.</summary>
    /// <exception cref="ArgumentException">A value holds a space or a newline, which PMI-1 cannot carry.</exception>
    public string ToLine()
    {
        var line = new StringBuilder("cmd=").Append(Name);
        foreach (var (key, value) in _attributes)
        {
            if (value.AsSpan().IndexOfAny(' ', '\n') >= 0)
                throw new ArgumentException($"PMI-1 cannot carry the value of '{key}', which holds a space or newline: '{value}'.", nameof(value));
            line.Append(' ').Append(key).Append('=').Append(value);
        }
        return line.Append('\n').ToString();
    }

    /// <summary>The PMI-2 command, its length prefix included, as UTF-8.</summary>
    /// <exception cref="ArgumentException">A value holds a semicolon, or the command is longer than <see cref="MaxLength"/>.</exception>
    public byte[] ToFrame()
    {
        var body = new StringBuilder("cmd=").Append(Name).Append(';');
        foreach (var (key, value) in _attributes)
        {
            if (value.Contains(';', StringComparison.Ordinal))
                throw new ArgumentException($"PMI-2 cannot carry the value of '{key}', which holds a semicolon: '{value}'.", nameof(value));
            body.Append(key).Append('=').Append(value).Append(';');
        }
        var bytes = Encoding.UTF8.GetBytes(body.ToString());
        if (bytes.Length > MaxLength) throw new ArgumentException($"A PMI-2 command is at most {MaxLength} bytes; '{Name}' is {bytes.Length}.", nameof(bytes));
        var frame = new byte[6 + bytes.Length];
        // Blank-padded on the left, as MPICH's client writes it ("%6d").
        Encoding.ASCII.GetBytes(bytes.Length.ToString(CultureInfo.InvariantCulture).PadLeft(6), frame);
        bytes.CopyTo(frame, 6);
        return frame;
    }

    /// <summary>Reads a PMI-1 line (without its newline): <c>cmd=name key=value ...</c>.</summary>
    /// <exception cref="MpiException">Transport: it does not start with <c>cmd=</c>.</exception>
    public static PmiCommand ParseLine(string line)
    {
        ArgumentNullException.ThrowIfNull(line);
        var tokens = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return Parse(tokens, line);
    }

    /// <summary>Reads a PMI-2 command's body (after its length): <c>cmd=name;key=value;...</c>.</summary>
    /// <exception cref="MpiException">Transport: it does not start with <c>cmd=</c>.</exception>
    public static PmiCommand ParseBody(string body)
    {
        ArgumentNullException.ThrowIfNull(body);
        return Parse(body.Split(';', StringSplitOptions.RemoveEmptyEntries), body);
    }

    /// <summary>The length a PMI-2 command's 6-character prefix states, padded with spaces on either side.</summary>
    /// <exception cref="MpiException">Transport: it is not a length.</exception>
    public static int ParseLength(ReadOnlySpan<byte> prefix)
    {
        var text = Encoding.ASCII.GetString(prefix);
        return int.TryParse(text.Trim(' '), NumberStyles.None, CultureInfo.InvariantCulture, out var length)
            ? length
            : throw new MpiException(ErrorClass.Transport, $"The PMI server sent '{text}' where a PMI-2 command's 6-digit length belongs.");
    }

    private static PmiCommand Parse(string[] tokens, string text)
    {
        if (tokens.Length == 0 || !tokens[0].StartsWith("cmd=", StringComparison.Ordinal) || tokens[0].Length == 4)
            throw new MpiException(ErrorClass.Transport, $"The PMI server sent '{text}', which is not a PMI command (cmd=...).");
        var attributes = new List<KeyValuePair<string, string>>(tokens.Length - 1);
        for (int i = 1; i < tokens.Length; i++)
        {
            // The first '=' ends the key; a value may hold more of them (Hydra's parser reads it so too).
            int equals = tokens[i].IndexOf('=', StringComparison.Ordinal);
            attributes.Add(equals < 0 ? new(tokens[i], "") : new(tokens[i][..equals], tokens[i][(equals + 1)..]));
        }
        return new PmiCommand(tokens[0][4..], attributes);
    }

    /// <summary>The command as a PMI-2 body, for messages.</summary>
    public override string ToString()
    {
        var text = new StringBuilder("cmd=").Append(Name).Append(';');
        foreach (var (key, value) in _attributes) text.Append(key).Append('=').Append(value).Append(';');
        return text.ToString();
    }
}
