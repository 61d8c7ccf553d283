using Microsoft.FSharp.Collections;

namespace Pmpi.Polyglot;

/// <summary>Rank routines written in C#, for tests whose other ranks are in F# or Visual Basic.</summary>
public static class CSharpRanks
{
    /// <summary>Receives an F# record and sends back the person a year older who also speaks C#.</summary>
    public static void Birthday(Communicator comm, int source, int tag)
    {
        var person = comm.Receive<Person>(source, tag);
        comm.Send(new Person(person.Name, person.Age + 1, FSharpList<string>.Cons("C#", person.Languages)), source, tag);
    }

    /// <summary>Receives an F# union and sends back the shape twice as large (Empty stays Empty).</summary>
    public static void Enlarge(Communicator comm, int source, int tag)
    {
        var shape = comm.Receive<Shape>(source, tag);
        var larger = shape switch
        {
            Shape.Circle circle => Shape.NewCircle(circle.radius * 2),
            Shape.Rectangle rectangle => Shape.NewRectangle(rectangle.width * 2, rectangle.height * 2),
            _ => shape,
        };
        comm.Send(larger, source, tag);
    }

    /// <summary>Receives a Visual Basic class and sends back the particle moved by one along every axis, charge negated.</summary>
    public static void Nudge(Communicator comm, int source, int tag)
    {
        var particle = comm.Receive<Particle>(source, tag);
        comm.Send(new Particle { Name = particle.Name + " (C#)", Position = [.. particle.Position.Select(x => x + 1)], Charge = -particle.Charge }, source, tag);
    }

    /// <summary>Receives Visual Basic structures, one serialized and one raw, and sends back each doubled.</summary>
    public static void Double(Communicator comm, int source, int tag)
    {
        var sample = comm.Receive<Sample>(source, tag);
        var point = comm.Receive<Point3>(source, tag);
        comm.Send(new Sample { Label = sample.Label + sample.Label, Value = sample.Value * 2 }, source, tag);
        comm.Send(new Point3 { X = point.X * 2, Y = point.Y * 2, Z = point.Z * 2 }, source, tag);
    }
}
