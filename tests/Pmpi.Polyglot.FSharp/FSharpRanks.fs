namespace Pmpi.Polyglot

open Pmpi.FSharp

/// Rank routines written in F#, for tests whose other ranks are in C# or Visual Basic.
module FSharpRanks =

    /// Receives a person from <paramref name="source"/> and sends back the person a year older who also speaks F#.
    let birthday source tag world =
        let person = world |> Mpi.recv<Person> source tag
        world |> Mpi.send source tag { person with Age = person.Age + 1; Languages = "F#" :: person.Languages }

    /// Receives a shape and sends back its area as a float.
    let area source tag world =
        let area =
            match world |> Mpi.recv<Shape> source tag with
            | Circle radius -> System.Math.PI * radius * radius
            | Rectangle (width, height) -> width * height
            | Empty -> 0.0
        world |> Mpi.send source tag area
