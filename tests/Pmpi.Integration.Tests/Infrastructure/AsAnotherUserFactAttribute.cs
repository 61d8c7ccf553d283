namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// A fact that runs a process as another user (`setpriv --reuid=nobody`): Linux, run as root, with setpriv present.
/// Elsewhere it shows as skipped, saying why (xunit 2 has no runtime skip).
/// </summary>
public sealed class AsAnotherUserFactAttribute : FactAttribute
{
    /// <summary>util-linux's setpriv, which switches user, group and supplementary groups before exec.</summary>
    public const string Setpriv = "/usr/bin/setpriv";

    public AsAnotherUserFactAttribute()
    {
        if (!OperatingSystem.IsLinux()) Skip = "Linux only: the test runs the attacker as another uid with setpriv.";
        else if (System.Environment.UserName != "root") Skip = "Needs root, to run the attacker as the user nobody with setpriv.";
        else if (!File.Exists(Setpriv)) Skip = $"{Setpriv} is missing (Debian: util-linux).";
    }
}
