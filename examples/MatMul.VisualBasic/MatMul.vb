Imports Pmpi.VisualBasic
Imports System.Globalization
Imports System.Numerics
Imports System.Runtime.CompilerServices
Imports System.Runtime.Intrinsics

''' <summary>What the master measured: the product, the distributed and sequential times, and the largest difference.</summary>
Public NotInheritable Class MatMulResult
    Public Property Rows As Integer
    Public Property Columns As Integer
    Public Property ColumnsOfB As Integer
    Public Property Product As Double()
    Public Property Workers As String()
    Public Property Seconds As Double
    Public Property SequentialSeconds As Double
    Public Property MaxError As Double

    ''' <summary>The master's report, one line per worker then the result line.</summary>
    Public Iterator Function Report(masterLanguage As String) As IEnumerable(Of String)
        For w = 0 To Workers.Length - 1
            Yield $"worker {w + 1}: {Workers(w)}"
        Next
        Yield String.Format(CultureInfo.InvariantCulture,
            "C = A({0}x{1}) x B({1}x{2}) by a master in {3} and {4} workers in {5:F3} s (sequential {6:F3} s), max abs error {7:E2}, sum of C {8:R}",
            Rows, Columns, ColumnsOfB, masterLanguage, Workers.Length, Seconds, SequentialSeconds, MaxError, Product.Sum())
    End Function
End Class

''' <summary>
''' The master/worker matrix multiply of the PMPI paper, speaking the protocol of MatMul.CSharp: each worker sends its
''' language (tag 0); the master sends each worker {rows, columns, columnsOfB} (tag 1), B (tag 2) and its rows of A
''' (tag 3); the worker returns its rows of C (tag 4). Row-major Double(); the first rows Mod workers workers take one
''' row more.
''' </summary>
Public Module MatMul

    ''' <summary>The largest difference from the sequential product that counts as correct.</summary>
    Public Const Tolerance As Double = 0.000000001

    Private Const LanguageTag As Integer = 0, SizeTag As Integer = 1, BTag As Integer = 2, ATag As Integer = 3, CTag As Integer = 4

    ''' <summary>The sizes (default: the paper's 2400 × 1200 times 1200 × 500); --label text goes to <paramref name="label"/>.</summary>
    Public Function ParseArguments(args As String(), ByRef label As String) As Integer()
        Dim sizes = New Integer() {2400, 1200, 500}
        Dim position = 0
        Dim i = 0
        While i < args.Length
            Dim size As Integer
            If args(i) = "--label" AndAlso i + 1 < args.Length Then
                i += 1
                label = args(i)
            ElseIf position < 3 AndAlso Integer.TryParse(args(i), NumberStyles.None, CultureInfo.InvariantCulture, size) AndAlso size > 0 Then
                sizes(position) = size
                position += 1
            Else
                Throw New ArgumentException($"Unexpected argument '{args(i)}': expected rows, columns and columns of B (positive numbers), and --label text.")
            End If
            i += 1
        End While
        Return sizes
    End Function

    ''' <summary>Rank 0's part: distributes the work, assembles C and checks it against a sequential product.</summary>
    Public Function Master(world As Intracommunicator, rows As Integer, columns As Integer, columnsOfB As Integer) As MatMulResult
        Dim a = Fill(rows, columns, Function(i, j) ((i * 31 + j * 17) Mod 101) / 101.0 - 0.5)
        Dim b = Fill(columns, columnsOfB, Function(i, j) ((i * 13 + j * 7) Mod 37) / 37.0 - 0.25)
        Dim workers = world.Size - 1
        Dim languages(workers - 1) As String
        For w = 1 To workers
            world.Receive(w, LanguageTag, languages(w - 1))
        Next

        Dim start = Mpi.Time
        Dim c(rows * columnsOfB - 1) As Double
        If workers = 0 Then Multiply(a, b, c, rows, columns, columnsOfB)
        For w = 1 To workers
            Dim first = FirstRow(rows, workers, w), count = Share(rows, workers, w)
            Dim rowsOfA(count * columns - 1) As Double
            Array.Copy(a, first * columns, rowsOfA, 0, rowsOfA.Length)
            world.Send({count, columns, columnsOfB}, w, SizeTag)
            world.Send(b, w, BTag)
            world.Send(rowsOfA, w, ATag)
        Next
        For w = 1 To workers
            Dim rowsOfC As Double() = Nothing
            world.Receive(w, CTag, rowsOfC)
            rowsOfC.CopyTo(c, FirstRow(rows, workers, w) * columnsOfB)
        Next
        Dim seconds = Mpi.Time - start

        start = Mpi.Time
        Dim expected(rows * columnsOfB - 1) As Double
        MultiplySequentially(a, b, expected, rows, columns, columnsOfB)
        Dim sequential = Mpi.Time - start
        Dim maxError = 0.0
        For i = 0 To c.Length - 1
            maxError = Math.Max(maxError, Math.Abs(c(i) - expected(i)))
        Next
        Return New MatMulResult With {.Rows = rows, .Columns = columns, .ColumnsOfB = columnsOfB, .Product = c, .Workers = languages,
                                      .Seconds = seconds, .SequentialSeconds = sequential, .MaxError = maxError}
    End Function

    ''' <summary>Every other rank's part: announces its language, multiplies its rows and returns them.</summary>
    Public Sub Worker(world As Intracommunicator, language As String)
        world.Send(language, 0, LanguageTag)
        Dim sizes As Integer() = Nothing, a As Double() = Nothing, b As Double() = Nothing
        world.Receive(0, SizeTag, sizes)
        world.Receive(0, BTag, b)
        world.Receive(0, ATag, a)
        Dim c(sizes(0) * sizes(2) - 1) As Double
        Multiply(a, b, c, sizes(0), sizes(1), sizes(2))
        world.Send(c, 0, CTag)
    End Sub

    ''' <summary>C += A × B in i-k-j order, so the inner loop runs along rows of B and C a vector at a time.</summary>
    ' Called once per rank: optimised at once rather than started as tier-0 code and patched by on-stack replacement.
    <MethodImpl(MethodImplOptions.AggressiveOptimization)>
    Public Sub Multiply(a As Double(), b As Double(), c As Double(), rows As Integer, columns As Integer, columnsOfB As Integer)
        For i = 0 To rows - 1
            Dim rowOfC = i * columnsOfB
            For k = 0 To columns - 1
                AddScaled(c, rowOfC, a(i * columns + k), b, k * columnsOfB, columnsOfB)
            Next
        Next
    End Sub

    ' row += scale × other over length elements: 512-bit vectors where the processor has them, then Vector(Of T), then
    ' one at a time, with fused multiply-adds (what a C compiler's vectoriser makes of the loop with -O3 -march=native).
    ' The vectors load and store at offsets from the rows' first elements, passed ByRef, whose ends are checked once.
    <MethodImpl(MethodImplOptions.AggressiveInlining)>
    Private Sub AddScaled(row As Double(), rowStart As Integer, scale As Double, other As Double(), otherStart As Integer, length As Integer)
        If rowStart + length > row.Length OrElse otherStart + length > other.Length Then Throw New ArgumentOutOfRangeException(NameOf(length))
        Dim j = AddScaledVectors(row(rowStart), scale, other(otherStart), length)
        While j < length
            row(rowStart + j) = Math.FusedMultiplyAdd(scale, other(otherStart + j), row(rowStart + j))
            j += 1
        End While
    End Sub

    ' The vector part of AddScaled, from the first elements of the two rows; returns how many elements it did.
    <MethodImpl(MethodImplOptions.AggressiveInlining)>
    Private Function AddScaledVectors(ByRef row As Double, scale As Double, ByRef other As Double, length As Integer) As Integer
        Dim j = 0
        If Vector512.IsHardwareAccelerated Then
            Dim scales = Vector512.Create(scale)
            While j <= length - Vector512(Of Double).Count
                Dim offset = New UIntPtr(CUInt(j))
                Vector512.FusedMultiplyAdd(scales, Vector512.LoadUnsafe(other, offset), Vector512.LoadUnsafe(row, offset)).StoreUnsafe(row, offset)
                j += Vector512(Of Double).Count
            End While
        End If
        Dim scaled = New Vector(Of Double)(scale)
        While j <= length - Vector(Of Double).Count
            Dim offset = New UIntPtr(CUInt(j))
            Vector.FusedMultiplyAdd(scaled, Vector.LoadUnsafe(other, offset), Vector.LoadUnsafe(row, offset)).StoreUnsafe(row, offset)
            j += Vector(Of Double).Count
        End While
        Return j
    End Function

    Private Sub MultiplySequentially(a As Double(), b As Double(), c As Double(), rows As Integer, columns As Integer, columnsOfB As Integer)
        For i = 0 To rows - 1
            For k = 0 To columns - 1
                For j = 0 To columnsOfB - 1
                    c(i * columnsOfB + j) += a(i * columns + k) * b(k * columnsOfB + j)
                Next
            Next
        Next
    End Sub

    Private Function Share(rows As Integer, workers As Integer, worker As Integer) As Integer
        Return rows \ workers + If(worker - 1 < rows Mod workers, 1, 0)
    End Function

    Private Function FirstRow(rows As Integer, workers As Integer, worker As Integer) As Integer
        Return (worker - 1) * (rows \ workers) + Math.Min(worker - 1, rows Mod workers)
    End Function

    Private Function Fill(rows As Integer, columns As Integer, element As Func(Of Integer, Integer, Double)) As Double()
        Dim matrix(rows * columns - 1) As Double
        For i = 0 To rows - 1
            For j = 0 To columns - 1
                matrix(i * columns + j) = element(i, j)
            Next
        Next
        Return matrix
    End Function

End Module
