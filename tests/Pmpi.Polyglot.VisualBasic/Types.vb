''' <summary>A Visual Basic class with properties, an array among them.</summary>
Public Class Particle
    Public Property Name As String = ""
    Public Property Position As Double() = Array.Empty(Of Double)()
    Public Property Charge As Integer
End Class

''' <summary>A Visual Basic structure holding a reference (so it travels serialized, by its public fields).</summary>
Public Structure Sample
    Public Label As String
    Public Value As Double
End Structure

''' <summary>A Visual Basic structure of plain numbers (so it travels as raw bytes).</summary>
Public Structure Point3
    Public X As Double
    Public Y As Double
    Public Z As Double
End Structure
