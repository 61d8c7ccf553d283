module Pmpi.FSharp.Tests.SerializerTests

open System
open System.Buffers
open System.Text
open System.Text.Json
open Xunit
open Pmpi.Payloads
open Pmpi.FSharp
open Pmpi.Polyglot

let private serializer = FSharpPayloadSerializer.Default :> IPayloadSerializer

let private write (value: 'T) =
    let buffer = ArrayBufferWriter<byte>()
    serializer.Serialize(buffer, value)
    Encoding.UTF8.GetString(buffer.WrittenSpan)

let private read<'T> (json: string) = serializer.Deserialize<'T>(ReadOnlySpan(Encoding.UTF8.GetBytes json))

[<Fact>]
let ``Serialize_UnionCases_WritesCaseAndFields`` () =
    Assert.Equal("""{"Case":"Rectangle","Fields":[2,3]}""", write (Rectangle(2.0, 3.0)))
    Assert.Equal("""{"Case":"Empty"}""", write Empty)

[<Fact>]
let ``Serialize_RecordAndOption_WritesWhatDefaultJsonWrites`` () =
    let person = { Name = "Ada"; Age = 36; Languages = [ "F#" ] }
    let defaultJson (value: 'T) =
        let buffer = ArrayBufferWriter<byte>()
        (JsonPayloadSerializer.Default :> IPayloadSerializer).Serialize(buffer, value)
        Encoding.UTF8.GetString(buffer.WrittenSpan)
    Assert.Equal(defaultJson person, write person)
    Assert.Equal(defaultJson (Some 3), write (Some 3))

[<Theory>]
[<InlineData("""{"Case":"Triangle"}""", "no case 'Triangle'")>]
[<InlineData("""{"Case":"Circle"}""", "case Circle takes 1 fields")>]
[<InlineData("""{"Case":"Circle","Fields":[1,2]}""", "the end of case Circle's 1 fields")>]
[<InlineData("""{"Fields":[1],"Case":"Circle"}""", "\"Case\" first")>]
[<InlineData("""[1]""", "expected an object")>]
let ``Deserialize_MalformedUnion_ThrowsNamingTypeAndProblem`` (json: string, problem: string) =
    let error = Assert.ThrowsAny<JsonException>(fun () -> read<Shape> json |> ignore)
    Assert.Contains("Pmpi.Polyglot.Shape", error.Message)
    Assert.Contains(problem, error.Message)
