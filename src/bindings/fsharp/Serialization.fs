namespace Pmpi.FSharp

open System
open System.Text.Json
open System.Text.Json.Serialization
open Microsoft.FSharp.Reflection
open Pmpi
open Pmpi.Payloads

/// Writes a union value as {"Case":"Name","Fields":[...]} and reads it back, building only cases of the union the
/// receiver names (never a type the payload names), like the rest of the JSON serializer.
type internal UnionConverter<'T>() =
    inherit JsonConverter<'T>()

    static let cases = FSharpType.GetUnionCases(typeof<'T>, true)
    static let tagOf = FSharpValue.PreComputeUnionTagReader(typeof<'T>, true)
    static let readers = cases |> Array.map (fun case -> FSharpValue.PreComputeUnionReader(case, true))
    static let constructors = cases |> Array.map (fun case -> FSharpValue.PreComputeUnionConstructor(case, true))
    static let fieldTypes = cases |> Array.map (fun case -> case.GetFields() |> Array.map (fun field -> field.PropertyType))

    static let invalid (detail: string) =
        JsonException $"A {typeof<'T>.FullName} union value must be {{\"Case\":\"Name\",\"Fields\":[...]}}: {detail}."

    override _.Write(writer, value, options) =
        let tag = tagOf (box value)
        writer.WriteStartObject()
        writer.WriteString("Case", cases[tag].Name)
        if fieldTypes[tag].Length > 0 then
            writer.WriteStartArray "Fields"
            Array.iter2 (fun field fieldType -> JsonSerializer.Serialize(writer, field, fieldType, options)) (readers[tag] (box value)) fieldTypes[tag]
            writer.WriteEndArray()
        writer.WriteEndObject()

    static member private Next(reader: byref<Utf8JsonReader>, token: JsonTokenType, what: string) =
        if not (reader.Read()) || reader.TokenType <> token then raise (invalid $"expected {what}")

    override _.Read(reader, _, options) =
        if reader.TokenType <> JsonTokenType.StartObject then raise (invalid "expected an object")
        UnionConverter<'T>.Next(&reader, JsonTokenType.PropertyName, "\"Case\" first")
        if reader.GetString() <> "Case" then raise (invalid "expected \"Case\" first")
        UnionConverter<'T>.Next(&reader, JsonTokenType.String, "the case name")
        let name = string (reader.GetString())
        let tag =
            match cases |> Array.tryFindIndex (fun case -> case.Name = name) with
            | Some tag -> tag
            | None -> raise (invalid $"it has no case '{name}'")
        let fields = Array.zeroCreate<obj> fieldTypes[tag].Length
        if not (reader.Read()) then raise (invalid "the object ends early")
        if reader.TokenType = JsonTokenType.PropertyName then
            if reader.GetString() <> "Fields" then raise (invalid "expected \"Fields\" after \"Case\"")
            UnionConverter<'T>.Next(&reader, JsonTokenType.StartArray, "the field array")
            for i in 0 .. fields.Length - 1 do
                if not (reader.Read()) || reader.TokenType = JsonTokenType.EndArray then raise (invalid $"case {name} takes {fields.Length} fields")
                fields[i] <- Unchecked.nonNull (JsonSerializer.Deserialize(&reader, fieldTypes[tag][i], options))
            UnionConverter<'T>.Next(&reader, JsonTokenType.EndArray, $"the end of case {name}'s {fields.Length} fields")
            UnionConverter<'T>.Next(&reader, JsonTokenType.EndObject, "the end of the object")
        elif fields.Length > 0 then raise (invalid $"case {name} takes {fields.Length} fields")
        if reader.TokenType <> JsonTokenType.EndObject then raise (invalid "expected the end of the object")
        unbox<'T> (constructors[tag] fields)

/// Makes a UnionConverter for every F# union except options and lists, which System.Text.Json carries itself.
type internal UnionConverterFactory() =
    inherit JsonConverterFactory()

    static let builtIn = [| typedefof<option<_>>; typedefof<voption<_>>; typedefof<list<_>> |]

    override _.CanConvert(t) =
        FSharpType.IsUnion(t, true) && not (t.IsGenericType && Array.contains (t.GetGenericTypeDefinition()) builtIn)

    override _.CreateConverter(t, _) =
        nonNull (Activator.CreateInstance(typedefof<UnionConverter<_>>.MakeGenericType t)) :?> JsonConverter

/// <summary>
/// The serializer of jobs with F# ranks: PMPI's JSON serializer plus F# unions, so records, tuples, unions, lists,
/// options, maps and sets travel between ranks. Records, tuples and collections are written exactly as the default
/// <see cref="T:Pmpi.Payloads.JsonPayloadSerializer"/> writes them, so a C# or Visual Basic rank exchanging F# unions
/// runs its job with this serializer too (every rank of a job uses the same one); <see cref="M:Pmpi.FSharp.Mpi.run"/>
/// does that for F# programs.
/// </summary>
[<Sealed>]
type FSharpPayloadSerializer private (inner: JsonPayloadSerializer) =
    /// <summary>The shared instance.</summary>
    static member val Default =
        let options = JsonSerializerOptions(JsonSerializerDefaults.General, IncludeFields = true)
        options.Converters.Add(UnionConverterFactory())
        FSharpPayloadSerializer(JsonPayloadSerializer options)

    /// <summary>Environment options whose serializer is <see cref="P:Pmpi.FSharp.FSharpPayloadSerializer.Default"/>.</summary>
    static member Options() = EnvironmentOptions(Serializer = FSharpPayloadSerializer.Default)

    /// <summary>The same, aborting an in-process job that runs longer than <paramref name="timeout"/>.</summary>
    static member Options(timeout: TimeSpan) =
        EnvironmentOptions(Serializer = FSharpPayloadSerializer.Default, Timeout = Nullable timeout)

    interface IPayloadSerializer with
        member _.Serialize(destination, value) = inner.Serialize(destination, value)
        member _.Deserialize(source) = inner.Deserialize(source)
