using System.Runtime.Serialization;

namespace Pmpi.Tests.PointToPoint;

/// <summary>What MPI.NET programs send through BinaryFormatter: a [Serializable] class whose state is private.</summary>
[Serializable]
[KnownType(typeof(SavingsAccount))]
public class Account
{
    private readonly string _owner;
    private decimal _balance;
    private readonly List<string> _history = [];
    [NonSerialized] private int _cachedHash;

    public Account(string owner, decimal balance)
    {
        _owner = owner;
        _balance = balance;
        _cachedHash = owner.GetHashCode(StringComparison.Ordinal);
    }

    public string Owner => _owner;

    public decimal Balance => _balance;

    public IReadOnlyList<string> History => _history;

    public int CachedHash => _cachedHash;

    public int[] Limits { get; set; } = [];

    public void Deposit(decimal amount)
    {
        _balance += amount;
        _history.Add($"+{amount}");
    }
}

/// <summary>A subclass whose base holds private state too.</summary>
[Serializable]
public sealed class SavingsAccount(string owner, decimal balance, double rate) : Account(owner, balance)
{
    private readonly double _rate = rate;

    public double Rate => _rate;
}

[Serializable]
public sealed class Node
{
    public int Value;
    public Node? Next;
    public Node? Other;
}

[Serializable]
[KnownType(typeof(Circle))]
[KnownType(typeof(Square))]
public abstract class Shape
{
    public abstract double Area { get; }
}

[Serializable]
public sealed class Circle(double radius) : Shape
{
    private readonly double _radius = radius;

    public override double Area => Math.PI * _radius * _radius;
}

[Serializable]
public sealed class Square(double side) : Shape
{
    private readonly double _side = side;

    public override double Area => _side * _side;
}

/// <summary>A subclass of a base that does not list it as a [KnownType].</summary>
[Serializable]
public sealed class Cube(double side) : Shape
{
    private readonly double _side = side;

    public override double Area => 6 * _side * _side;
}

[Serializable]
public sealed class Drawing
{
    public Shape[] Shapes = [];
    public Dictionary<string, Shape> ByName = [];
    public HashSet<int> Layers = [];
}

/// <summary>The shape F# gives a union: an abstract base whose cases are its nested subclasses.</summary>
[Serializable]
public abstract class Expression
{
    [Serializable]
    public sealed class Constant(int value) : Expression
    {
        public int Value { get; } = value;
    }

    [Serializable]
    public sealed class Sum(Expression left, Expression right) : Expression
    {
        public Expression Left { get; } = left;

        public Expression Right { get; } = right;
    }

    public int Evaluate() => this switch
    {
        Constant c => c.Value,
        Sum s => s.Left.Evaluate() + s.Right.Evaluate(),
        _ => throw new InvalidOperationException(),
    };
}

[Serializable]
public sealed class Holder
{
    public object? Anything;
}

public abstract class ObjectTests(Device device) : DeviceSuite(device)
{
    [Fact]
    public void Receive_SerializableClassWithPrivateFields_RoundTrips()
    {
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                var account = new SavingsAccount("ada", 10m, 0.03) { Limits = [100, 200] };
                account.Deposit(5.5m);
                world.Send(account, 1, 0);
            }
            else
            {
                var received = world.Receive<SavingsAccount>(0, 0);
                Assert.Equal("ada", received.Owner);
                Assert.Equal(15.5m, received.Balance);
                Assert.Equal(["+5.5"], received.History);
                Assert.Equal([100, 200], received.Limits);
                Assert.Equal(0.03, received.Rate);
                Assert.Equal(0, received.CachedHash); // [NonSerialized]: not sent
            }
        });
    }

    [Fact]
    public void Receive_ArrayOfObjects_ArrivesAsOneMessage()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send(new[] { new Account("a", 1m), new Account("b", 2m), new SavingsAccount("c", 3m, 0.5) }, 1, 4);
            else
            {
                var status = world.Probe(0, 4);
                Assert.Equal(1, status.Count(typeof(Account[])));
                var accounts = world.Receive<Account[]>(0, 4);
                Assert.Null(world.ImmediateProbe(0, 4)); // nothing more was sent for the array
                Assert.Equal(["a", "b", "c"], accounts.Select(a => a.Owner));
                Assert.Equal([1m, 2m, 3m], accounts.Select(a => a.Balance));
                Assert.Equal(0.5, Assert.IsType<SavingsAccount>(accounts[2]).Rate);
            }
        });
    }

    [Fact]
    public void Send_CyclicGraph_WithPreserveReferences_KeepsCycleAndSharing()
    {
        Run(2, new EnvironmentOptions { PreserveReferences = true }, world =>
        {
            if (world.Rank == 0)
            {
                var first = new Node { Value = 1 };
                var second = new Node { Value = 2, Next = first };
                first.Next = second;
                first.Other = second;
                world.Send(first, 1, 0);
            }
            else
            {
                var first = world.Receive<Node>(0, 0);
                Assert.Equal(2, first.Next!.Value);
                Assert.Same(first, first.Next.Next);
                Assert.Same(first.Next, first.Other);
            }
        });
    }

    [Fact]
    public void Send_CyclicGraph_WithoutPreserveReferences_FailsAtSenderNamingTypeAndOption()
    {
        Run(1, world =>
        {
            var node = new Node();
            node.Next = node;
            var error = Assert.Throws<MpiException>(() => world.Send(node, 0, 0));
            Assert.Equal(ErrorClass.Serialization, error.ErrorClass);
            Assert.Contains("Pmpi.Tests.PointToPoint.Node is reachable twice", error.Message);
            Assert.Contains(nameof(EnvironmentOptions.PreserveReferences), error.Message);
        });
    }

    [Fact]
    public void Receive_LongLinkedList_NeedsNoDeepStack()
    {
        const int length = 100_000;
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                Node? head = null;
                for (int i = length - 1; i >= 0; i--) head = new Node { Value = i, Next = head };
                world.Send(head, 1, 0);
            }
            else
            {
                var node = world.Receive<Node>(0, 0);
                int count = 0;
                for (; node is not null; node = node.Next) Assert.Equal(count++, node.Value);
                Assert.Equal(length, count);
            }
        });
    }

    [Fact]
    public void Receive_KnownTypesAndCollections_RoundTrip()
    {
        Run(2, world =>
        {
            if (world.Rank == 0)
            {
                world.Send(new Drawing
                {
                    Shapes = [new Circle(1), new Square(2)],
                    ByName = new() { ["sun"] = new Circle(3) },
                    Layers = [1, 5],
                }, 1, 0);
            }
            else
            {
                var drawing = world.Receive<Drawing>(0, 0);
                Assert.IsType<Circle>(drawing.Shapes[0]);
                Assert.Equal(4.0, Assert.IsType<Square>(drawing.Shapes[1]).Area);
                Assert.Equal(Math.PI * 9, drawing.ByName["sun"].Area, 12);
                Assert.Equal([1, 5], drawing.Layers.Order());
            }
        });
    }

    [Fact]
    public void Receive_NestedCaseSubclasses_RoundTripWithoutKnownType()
    {
        Run(2, world =>
        {
            if (world.Rank == 0) world.Send<Expression>(new Expression.Sum(new Expression.Constant(2), new Expression.Sum(new Expression.Constant(3), new Expression.Constant(4))), 1, 0);
            else Assert.Equal(9, world.Receive<Expression>(0, 0).Evaluate());
        });
    }

    [Fact]
    public void Send_SubclassNotKnownToBase_FailsAtSenderNamingBoth()
    {
        Run(1, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Send(new Drawing { Shapes = [new Cube(1)] }, 0, 0));
            Assert.Equal(ErrorClass.Serialization, error.ErrorClass);
            Assert.Contains("declared Pmpi.Tests.PointToPoint.Shape holds a Pmpi.Tests.PointToPoint.Cube", error.Message);
            Assert.Contains("[KnownType(typeof(Cube))]", error.Message);
        });
    }

    [Fact]
    public void Send_FieldDeclaredObject_FailsAtSenderNamingTypeAndField()
    {
        Run(1, world =>
        {
            var error = Assert.Throws<MpiException>(() => world.Send(new Holder(), 0, 0));
            Assert.Equal(ErrorClass.Serialization, error.ErrorClass);
            Assert.Contains("Cannot send a Pmpi.Tests.PointToPoint.Holder: Pmpi.Tests.PointToPoint.Holder.Anything: a field declared System.Object", error.Message);
        });
    }

    [Fact]
    public void Receive_OtherObjectType_NamesBothTypesSourceAndTag()
    {
        Run(3, world =>
        {
            if (world.Rank == 2) world.Send(new Account("a", 1m), 0, 9);
            else if (world.Rank == 0)
            {
                var error = Assert.Throws<MpiException>(() => world.Receive<Node>(2, 9));
                Assert.Equal(ErrorClass.TypeMismatch, error.ErrorClass);
                Assert.Equal("Rank 0 receiving from rank 2 with tag 9: expected Pmpi.Tests.PointToPoint.Node but the sender sent Pmpi.Tests.PointToPoint.Account.", error.Message);
            }
        });
    }
}
