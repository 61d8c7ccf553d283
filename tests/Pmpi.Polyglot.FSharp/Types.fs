namespace Pmpi.Polyglot

/// An F# record with a list field.
type Person = { Name: string; Age: int; Languages: string list }

/// An F# union with named fields, a tuple case and a case without fields.
type Shape =
    | Circle of radius: float
    | Rectangle of width: float * height: float
    | Empty

/// A recursive union.
type Tree =
    | Leaf of int
    | Node of Tree * Tree
