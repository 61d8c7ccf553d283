''' <summary>The predefined reductions by name, so a Visual Basic call needs no <c>Operation(Of T)</c>.</summary>
Public Enum ReduceOperation
    ''' <summary>Sum (MPI_SUM); concatenation for strings.</summary>
    Sum
    ''' <summary>Product (MPI_PROD).</summary>
    Product
    ''' <summary>Minimum (MPI_MIN).</summary>
    Min
    ''' <summary>Maximum (MPI_MAX).</summary>
    Max
    ''' <summary>Logical And (MPI_LAND), for Boolean.</summary>
    LogicalAnd
    ''' <summary>Logical Or (MPI_LOR), for Boolean.</summary>
    LogicalOr
    ''' <summary>Logical Xor (MPI_LXOR), for Boolean.</summary>
    LogicalXor
    ''' <summary>Bitwise And (MPI_BAND).</summary>
    BitwiseAnd
    ''' <summary>Bitwise Or (MPI_BOR).</summary>
    BitwiseOr
    ''' <summary>Bitwise Xor (MPI_BXOR).</summary>
    BitwiseXor
End Enum
