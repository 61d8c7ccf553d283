<#
.SYNOPSIS
    Installs the PMPI agent (`pmpi agent`) as a Windows service, or removes it with -Uninstall.

.DESCRIPTION
    Registers the published pmpi.exe as an automatic-start service that the Service Control Manager restarts when it
    fails, opens the agent's port in Windows Defender Firewall and registers the Event Log source the agent logs to.
    pmpi.exe speaks the SCM's protocol itself (Microsoft.Extensions.Hosting.WindowsServices): a service stop kills the
    ranks it launched before the process exits.

    Publish first, on any machine with the .NET SDK:
        dotnet publish src/Pmpi.Cli -r win-x64 --self-contained false -c Release -o C:\pmpi
    The node needs the ASP.NET Core Runtime 10 (it includes the .NET Runtime); rank programs built as .dll run
    under dotnet.exe from PATH.

    The agent speaks mutual TLS with the node's cluster credential (made by `pmpi cluster init` / `pmpi cluster
    issue`); the script copies it to ProgramData and lets only the service account and Administrators read it.

    Run from an elevated PowerShell (Windows PowerShell 5.1 or PowerShell 7).

.PARAMETER ExePath
    The published pmpi.exe. Defaults to pmpi.exe beside this script.
.PARAMETER CredentialsPath
    The node's credential directory (ca.crt, node.crt, node.key, cluster.key), from `pmpi cluster issue NODE --name
    <this node's address>`. Required: an agent without it would accept every caller. It is copied to
    %ProgramData%\PMPI\<ServiceName>\credentials, readable only by the service account and Administrators.
.PARAMETER Port
    The agent's TCP port; computation files name it as agent="host:port". Defaults to 7300.
.PARAMETER BindAddress
    The address the agent listens on. Defaults to 0.0.0.0 (every interface), so other nodes reach it.
.PARAMETER RankAddress
    This node's IP address that other nodes reach: rank endpoints listen on it. Defaults to 127.0.0.1, which only
    serves jobs whose ranks all run on this machine.
.PARAMETER Slots
    Ranks this node takes. Defaults to the number of logical processors.
.PARAMETER Domain
    The node's administrative domain, when computations declare domains. Defaults to none.
.PARAMETER ServiceName
    The service's name. Defaults to PmpiAgent.
.PARAMETER Credential
    The account the agent and its ranks run as. Defaults to the virtual account NT SERVICE\<ServiceName>, which needs
    no password; grant it read access to the rank programs and write access where ranks write.
.PARAMETER RemoteAddress
    Who may connect through the firewall rules: any value New-NetFirewallRule -RemoteAddress takes. Defaults to
    LocalSubnet.
.PARAMETER OpenRankPorts
    Also open the dynamic port range (49152-65535), where rank endpoints listen, for RemoteAddress: needed when ranks
    of one job run on several nodes without a gateway between them.
.PARAMETER Uninstall
    Stops and deletes the service and removes its firewall rules.

.EXAMPLE
    .\Install-PmpiAgent.ps1 -ExePath C:\pmpi\pmpi.exe -CredentialsPath C:\node2-credentials -RankAddress 10.1.0.2 -OpenRankPorts
.EXAMPLE
    .\Install-PmpiAgent.ps1 -Uninstall
#>
#Requires -RunAsAdministrator
[CmdletBinding(SupportsShouldProcess)]
param(
    [string] $ExePath = (Join-Path $PSScriptRoot 'pmpi.exe'),
    [string] $CredentialsPath,
    [ValidateRange(1, 65535)] [int] $Port = 7300,
    [string] $BindAddress = '0.0.0.0',
    [string] $RankAddress = '127.0.0.1',
    [ValidateRange(1, 4096)] [int] $Slots = [Environment]::ProcessorCount,
    [string] $Domain,
    [string] $ServiceName = 'PmpiAgent',
    [pscredential] $Credential,
    [string[]] $RemoteAddress = @('LocalSubnet'),
    [switch] $OpenRankPorts,
    [switch] $Uninstall
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$firewallGroup = "PMPI agent ($ServiceName)"
# The agent logs under its application name, the entry assembly's.
$eventSource = 'pmpi'

function Invoke-Sc {
    # sc.exe reports failure through its exit code only.
    & sc.exe @args | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "sc.exe $($args -join ' ') failed with exit code $LASTEXITCODE." }
}

if ($Uninstall) {
    $service = Get-Service -Name $ServiceName -ErrorAction SilentlyContinue
    if ($service) {
        if ($PSCmdlet.ShouldProcess($ServiceName, 'Stop and delete service')) {
            # A stop kills the ranks the agent launched.
            if ($service.Status -ne 'Stopped') { Stop-Service -Name $ServiceName -Force }
            Invoke-Sc delete $ServiceName
        }
    }
    else { Write-Warning "No service named $ServiceName." }
    Get-NetFirewallRule -Group $firewallGroup -ErrorAction SilentlyContinue | Remove-NetFirewallRule
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue (Join-Path $env:ProgramData "PMPI\$ServiceName")
    Write-Host "Removed $ServiceName. The Event Log source '$eventSource' stays (other pmpi installs may use it)."
    return
}

$ExePath = (Resolve-Path -LiteralPath $ExePath).Path
if (-not $CredentialsPath) { throw "-CredentialsPath is required: make one with 'pmpi cluster issue NODE --dir CLUSTER --out DIR --name <this node's address>'." }
foreach ($file in 'ca.crt', 'node.crt', 'node.key', 'cluster.key') {
    if (-not (Test-Path -LiteralPath (Join-Path $CredentialsPath $file))) { throw "$CredentialsPath has no ${file}: not a PMPI node credential." }
}
$parsed = $null
foreach ($address in @($BindAddress, $RankAddress)) {
    if (-not [System.Net.IPAddress]::TryParse($address, [ref] $parsed)) { throw "'$address' is not an IP address." }
}
if (Get-Service -Name $ServiceName -ErrorAction SilentlyContinue) {
    throw "A service named $ServiceName exists; run with -Uninstall first, or pick another -ServiceName."
}

$serviceAccount = if ($Credential) { $Credential.UserName } else { "NT SERVICE\$ServiceName" }
$credentialsDirectory = Join-Path $env:ProgramData "PMPI\$ServiceName\credentials"

# Each argument quoted, so paths and domains with spaces survive the SCM's command line.
$arguments = @('agent', '--credentials', $credentialsDirectory, '--port', $Port, '--bind', $BindAddress, '--rank-address', $RankAddress, '--slots', $Slots)
if ($Domain) { $arguments += @('--domain', $Domain) }
$binaryPath = (@($ExePath) + $arguments | ForEach-Object { '"{0}"' -f $_ }) -join ' '

if ($PSCmdlet.ShouldProcess($ServiceName, "Create service: $binaryPath")) {
    New-Service -Name $ServiceName -BinaryPathName $binaryPath -DisplayName 'PMPI agent' `
        -Description 'PMPI node agent: launches the ranks of MPI for .NET computations.' -StartupType Automatic | Out-Null
    if ($Credential) {
        $user = $Credential.UserName
        $password = $Credential.GetNetworkCredential().Password
        Invoke-Sc config $ServiceName obj= $user password= $password
    }
    else { Invoke-Sc config $ServiceName obj= "NT SERVICE\$ServiceName" }
    # Restart after 5 s, 5 s, then 30 s; the failure count resets after a day without failure. failureflag 1 also
    # counts a stop with a non-zero exit code (the agent exits 1 when it cannot bind) as a failure.
    Invoke-Sc failure $ServiceName reset= 86400 actions= restart/5000/restart/5000/restart/30000
    Invoke-Sc failureflag $ServiceName 1
}

if ($PSCmdlet.ShouldProcess($credentialsDirectory, 'Copy the credential, readable by the service account and Administrators only')) {
    New-Item -ItemType Directory -Force -Path $credentialsDirectory | Out-Null
    Copy-Item -Path (Join-Path $CredentialsPath '*') -Destination $credentialsDirectory -Force
    # No inherited access: the service account reads, Administrators and SYSTEM manage, nobody else sees the keys.
    & icacls.exe $credentialsDirectory /inheritance:r /grant:r "${serviceAccount}:(OI)(CI)R" 'Administrators:(OI)(CI)F' 'SYSTEM:(OI)(CI)F' | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "icacls failed on $credentialsDirectory with exit code $LASTEXITCODE." }
}

if ($PSCmdlet.ShouldProcess($eventSource, 'Register Event Log source')) {
    # A virtual account may not create the source on first write, so the installer does.
    if (-not [System.Diagnostics.EventLog]::SourceExists($eventSource)) {
        [System.Diagnostics.EventLog]::CreateEventSource($eventSource, 'Application')
    }
}

if ($PSCmdlet.ShouldProcess($firewallGroup, "Allow inbound TCP $Port")) {
    New-NetFirewallRule -DisplayName "PMPI agent (TCP $Port)" -Group $firewallGroup -Direction Inbound -Protocol TCP `
        -LocalPort $Port -RemoteAddress $RemoteAddress -Action Allow | Out-Null
    if ($OpenRankPorts) {
        New-NetFirewallRule -DisplayName 'PMPI rank endpoints (TCP 49152-65535)' -Group $firewallGroup -Direction Inbound `
            -Protocol TCP -LocalPort '49152-65535' -RemoteAddress $RemoteAddress -Action Allow | Out-Null
    }
}

if ($PSCmdlet.ShouldProcess($ServiceName, 'Start service')) {
    Start-Service -Name $ServiceName
    Write-Host "$ServiceName is running: pmpi agent on ${BindAddress}:$Port over mutual TLS (ranks on $RankAddress, $Slots slots)."
    Write-Host "Log: Event Viewer > Windows Logs > Application, source '$eventSource'. Remove with -Uninstall."
}
