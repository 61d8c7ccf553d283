<#
.SYNOPSIS
    Installs the PMPI gateway (`pmpi gateway`) as a Windows service, or removes it with -Uninstall.

.DESCRIPTION
    Registers the published pmpi.exe as an automatic-start service that the Service Control Manager restarts when it
    fails, opens the gateway's port in Windows Defender Firewall and registers the Event Log source it logs to. One
    gateway serves one administrative domain: it relays rank streams between that domain's ranks and the other
    domains' gateways, for jobs their masters register with it.

    Publish first, on any machine with the .NET SDK:
        dotnet publish src/Pmpi.Cli -r win-x64 --self-contained false -c Release -o C:\pmpi
    The machine needs the ASP.NET Core Runtime 10.

    The gateway speaks mutual TLS with the machine's cluster credential (`pmpi cluster issue NAME --name <each address
    it is reached at>`); the script copies it to ProgramData and lets only the service account and Administrators read it.

    Run from an elevated PowerShell (Windows PowerShell 5.1 or PowerShell 7).

.PARAMETER ExePath
    The published pmpi.exe. Defaults to pmpi.exe beside this script.
.PARAMETER CredentialsPath
    The credential directory (ca.crt, node.crt, node.key, cluster.key). Required: a gateway without it would accept
    every caller. Copied to %ProgramData%\PMPI\<ServiceName>\credentials, readable only by the service account and
    Administrators.
.PARAMETER Domain
    The domain it serves, as computation files name it. Required.
.PARAMETER Port
    Its TCP port; computation files name it as gateway="host:port". Defaults to 7400.
.PARAMETER BindAddress
    The address it listens on. Defaults to 0.0.0.0 (every interface).
.PARAMETER ServiceName
    The service's name. Defaults to PmpiGateway.
.PARAMETER RemoteAddress
    Who may connect through the firewall rule: its domain's nodes and the other domains' gateways; any value
    New-NetFirewallRule -RemoteAddress takes. Defaults to Any (the port is the one a campus opens to the others, and
    every caller is authenticated).
.PARAMETER DialOut
    Peer gateways (host:port) that cannot connect to this one, because it sits behind NAT or a firewall that lets
    nothing in: it dials each and carries their connections (pmpi gateway --dial-out). None by default.
.PARAMETER Uninstall
    Stops and deletes the service and removes its firewall rule.

.EXAMPLE
    .\Install-PmpiGateway.ps1 -ExePath C:\pmpi\pmpi.exe -CredentialsPath C:\gw-credentials -Domain campus-a
.EXAMPLE
    .\Install-PmpiGateway.ps1 -Uninstall
#>
#Requires -RunAsAdministrator
[CmdletBinding(SupportsShouldProcess)]
param(
    [string] $ExePath = (Join-Path $PSScriptRoot 'pmpi.exe'),
    [string] $CredentialsPath,
    [string] $Domain,
    [ValidateRange(1, 65535)] [int] $Port = 7400,
    [string] $BindAddress = '0.0.0.0',
    [string] $ServiceName = 'PmpiGateway',
    [string[]] $RemoteAddress = @('Any'),
    [string[]] $DialOut = @(),
    [switch] $Uninstall
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$firewallGroup = "PMPI gateway ($ServiceName)"
$eventSource = 'pmpi'

function Invoke-Sc {
    & sc.exe @args | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "sc.exe $($args -join ' ') failed with exit code $LASTEXITCODE." }
}

if ($Uninstall) {
    $service = Get-Service -Name $ServiceName -ErrorAction SilentlyContinue
    if ($service) {
        if ($PSCmdlet.ShouldProcess($ServiceName, 'Stop and delete service')) {
            if ($service.Status -ne 'Stopped') { Stop-Service -Name $ServiceName -Force }
            Invoke-Sc delete $ServiceName
        }
    }
    else { Write-Warning "No service named $ServiceName." }
    Get-NetFirewallRule -Group $firewallGroup -ErrorAction SilentlyContinue | Remove-NetFirewallRule
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue (Join-Path $env:ProgramData "PMPI\$ServiceName")
    Write-Host "Removed $ServiceName."
    return
}

$ExePath = (Resolve-Path -LiteralPath $ExePath).Path
if (-not $CredentialsPath) { throw "-CredentialsPath is required: make one with 'pmpi cluster issue NAME --dir CLUSTER --out DIR --name <the gateway's addresses>'." }
if (-not $Domain) { throw '-Domain is required: the domain this gateway serves, as computation files name it.' }
foreach ($file in 'ca.crt', 'node.crt', 'node.key', 'cluster.key') {
    if (-not (Test-Path -LiteralPath (Join-Path $CredentialsPath $file))) { throw "$CredentialsPath has no ${file}: not a PMPI credential." }
}
$parsed = $null
if (-not [System.Net.IPAddress]::TryParse($BindAddress, [ref] $parsed)) { throw "'$BindAddress' is not an IP address." }
if (Get-Service -Name $ServiceName -ErrorAction SilentlyContinue) {
    throw "A service named $ServiceName exists; run with -Uninstall first, or pick another -ServiceName."
}

$credentialsDirectory = Join-Path $env:ProgramData "PMPI\$ServiceName\credentials"
$arguments = @('gateway', '--credentials', $credentialsDirectory, '--domain', $Domain, '--port', $Port, '--bind', $BindAddress)
foreach ($peer in $DialOut) { $arguments += @('--dial-out', $peer) }
$binaryPath = (@($ExePath) + $arguments | ForEach-Object { '"{0}"' -f $_ }) -join ' '

if ($PSCmdlet.ShouldProcess($ServiceName, "Create service: $binaryPath")) {
    New-Service -Name $ServiceName -BinaryPathName $binaryPath -DisplayName 'PMPI gateway' `
        -Description "PMPI gateway of domain $Domain: relays MPI for .NET rank streams between domains." -StartupType Automatic | Out-Null
    # The virtual account NT SERVICE\<ServiceName>: no password, no rights beyond what is granted here.
    Invoke-Sc config $ServiceName obj= "NT SERVICE\$ServiceName"
    Invoke-Sc failure $ServiceName reset= 86400 actions= restart/5000/restart/5000/restart/30000
    Invoke-Sc failureflag $ServiceName 1
}

if ($PSCmdlet.ShouldProcess($credentialsDirectory, 'Copy the credential, readable by the service account and Administrators only')) {
    New-Item -ItemType Directory -Force -Path $credentialsDirectory | Out-Null
    Copy-Item -Path (Join-Path $CredentialsPath '*') -Destination $credentialsDirectory -Force
    & icacls.exe $credentialsDirectory /inheritance:r /grant:r "NT SERVICE\${ServiceName}:(OI)(CI)R" 'Administrators:(OI)(CI)F' 'SYSTEM:(OI)(CI)F' | Out-Null
    if ($LASTEXITCODE -ne 0) { throw "icacls failed on $credentialsDirectory with exit code $LASTEXITCODE." }
}

if ($PSCmdlet.ShouldProcess($eventSource, 'Register Event Log source')) {
    if (-not [System.Diagnostics.EventLog]::SourceExists($eventSource)) {
        [System.Diagnostics.EventLog]::CreateEventSource($eventSource, 'Application')
    }
}

if ($PSCmdlet.ShouldProcess($firewallGroup, "Allow inbound TCP $Port")) {
    New-NetFirewallRule -DisplayName "PMPI gateway (TCP $Port)" -Group $firewallGroup -Direction Inbound -Protocol TCP `
        -LocalPort $Port -RemoteAddress $RemoteAddress -Action Allow | Out-Null
}

if ($PSCmdlet.ShouldProcess($ServiceName, 'Start service')) {
    Start-Service -Name $ServiceName
    Write-Host "$ServiceName is running: pmpi gateway of domain $Domain on ${BindAddress}:$Port over mutual TLS."
    Write-Host "Log: Event Viewer > Windows Logs > Application, source '$eventSource'. Remove with -Uninstall."
}
