''' <summary>Runs in-process jobs for the tests and collects what each rank returned.</summary>
Friend Module Job

    ''' <summary>A bound for in-process jobs that should take well under a second.</summary>
    Public ReadOnly Timeout As TimeSpan = TimeSpan.FromSeconds(30)

    ''' <summary>Runs <paramref name="body"/> on <paramref name="ranks"/> ranks and returns each rank's result, in rank order.</summary>
    Public Function RunRanks(Of T)(ranks As Integer, body As Func(Of Intracommunicator, T)) As T()
        Dim results(ranks - 1) As T
        Mpi.Run(ranks, Timeout, Sub(world) results(world.Rank) = body(world))
        Return results
    End Function

End Module
