package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ConformanceTest.Row;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The committed {@value DifferentialConformanceTest#TABLE} (written by {@link
 * DifferentialConformanceTest} under -Preal-apiserver) cannot rot: it lists every row of {@link
 * ConformanceTest} in order, each with the verdict the row declares (same; a documented difference
 * with its reason; emulator only with its reason), and no undocumented difference. Runs in the
 * default build, without Go.
 */
class ConformanceTableTest {
  private static final Pattern LINE =
      Pattern.compile("^\\| (\\d+) \\| (.*) \\| (.*) \\| (.*) \\| (.*) \\|$");

  record TableRow(String name, String emulator, String real, String verdict) {}

  static List<TableRow> parse(String md) {
    List<TableRow> out = new ArrayList<>();
    for (String line : md.split("\n")) {
      Matcher m = LINE.matcher(line);
      if (m.matches()) {
        out.add(new TableRow(m.group(2), m.group(3), m.group(4), m.group(5)));
      }
    }
    return out;
  }

  @Test
  void theCommittedTableListsEveryRowWithItsDeclaredVerdict() throws IOException {
    Path file =
        Path.of(System.getProperty("basedir", System.getProperty("user.dir")))
            .resolve(DifferentialConformanceTest.TABLE);
    assertThat(file)
        .as("run DifferentialConformanceTest with -Preal-apiserver to generate it")
        .isRegularFile();
    String md = Files.readString(file);
    List<TableRow> table = parse(md);
    List<Row> rows = ConformanceTest.rows().toList();
    assertThat(table)
        .extracting(TableRow::name)
        .as("the rows of %s vs ConformanceTest: regenerate the table with -Preal-apiserver", file)
        .containsExactlyElementsOf(rows.stream().map(Row::operation).toList());
    assertThat(md).doesNotContain("UNDOCUMENTED").doesNotContain("probe failed");
    for (int i = 0; i < rows.size(); i++) {
      Row row = rows.get(i);
      TableRow t = table.get(i);
      if (row.emulatorOnly() != null) {
        assertThat(t.verdict()).as(row.operation()).startsWith("n/a");
        assertThat(md).as(row.operation()).contains(row.emulatorOnly());
      } else if (row.difference() != null) {
        assertThat(t.verdict()).as(row.operation()).startsWith("no (documented");
        assertThat(md).as(row.operation()).contains(row.difference());
        assertThat(t.real())
            .as(row.operation())
            .startsWith(Integer.toString(row.expectedCode(true)));
      } else {
        assertThat(t.verdict()).as(row.operation()).isEqualTo("yes");
        assertThat(t.real()).as(row.operation()).isEqualTo(t.emulator());
      }
      assertThat(t.emulator()).as(row.operation()).startsWith(Integer.toString(row.code()));
    }
  }

  @Test
  void theParserReadsTheTableLinesOnly() {
    String md =
        "# t\n\n| # | row | emulator | real | same? |\n|---|-----|----------|------|-------|\n"
            + "| 1 | GET Node | 200 | 200 | yes |\n| 2 | x | 415 UnsupportedMediaType | 201 | no (documented, see below) |\n"
            + "text | with | bars\n";
    assertThat(parse(md))
        .containsExactly(
            new TableRow("GET Node", "200", "200", "yes"),
            new TableRow("x", "415 UnsupportedMediaType", "201", "no (documented, see below)"));
  }
}
