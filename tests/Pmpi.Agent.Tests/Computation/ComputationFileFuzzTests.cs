using Pmpi.Agent.Computation;

namespace Pmpi.Agent.Tests.Computation;

/// <summary>
/// Randomized mutations of valid computation files (the shipped samples): whatever the text, the reader either
/// returns a computation or throws <see cref="ComputationFileException"/> with positions inside the text, never
/// anything else. A fixed seed set runs here; PMPI_FUZZ_SEEDS and PMPI_FUZZ_ITERATIONS (bench/fuzz.sh) run longer.
/// </summary>
public class ComputationFileFuzzTests
{
    private static readonly string[] Samples =
        [.. Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "jobs"), "*.xml").Order(StringComparer.Ordinal).Select(File.ReadAllText)];

    [Fact]
    public void Parse_MutatedSamples_OnlyFileErrorsWithPositionsInTheText()
    {
        foreach (int seed in FuzzSettings.Seeds)
        {
            var mutator = new Mutator(seed);
            // The parser is fast: ten mutations of it cost what one call to a daemon does.
            for (int i = 0; i < FuzzSettings.Iterations * 10; i++)
            {
                string text = mutator.Mutate(Samples[mutator.Random.Next(Samples.Length)]);
                try
                {
                    ComputationFile.Parse(text, "fuzz.xml", _ => true);
                }
                catch (ComputationFileException e)
                {
                    int lines = text.Split('\n').Length;
                    Assert.All(e.Errors, error => Assert.True(error.Location.Line <= lines + 1 && error.Message.Length > 0,
                        $"Seed {seed}, mutation {i}: error '{error}' points outside the {lines}-line text."));
                }
                catch (Exception e)
                {
                    Assert.Fail($"Seed {seed}, mutation {i}: {e.GetType().Name} escaped the reader: {e.Message}\n--- text ---\n{text}");
                }
            }
        }
    }
}
