package io.gnomon.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The fenced code blocks of a Markdown file, with their info strings and where they start. */
final class MarkdownBlocks {
  private MarkdownBlocks() {}

  /**
   * One fenced block.
   *
   * @param file the Markdown file
   * @param line the line of the opening fence, from 1
   * @param info the words after the opening fence, such as {@code [sql, runnable]}
   * @param text the lines between the fences
   */
  record Block(Path file, int line, List<String> info, List<String> text) {
    /** Whether the block's language is {@code language} and it is marked {@code runnable}. */
    boolean runnable(String language) {
      return !info.isEmpty() && info.get(0).equals(language) && info.contains("runnable");
    }

    /** Where the block is, for failure messages: {@code README.md:42}. */
    String where() {
      return file.getFileName() + ":" + line;
    }
  }

  /** Every block fenced with three backticks at column 0, in order. */
  static List<Block> of(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (!line.startsWith("```")) {
        continue;
      }
      List<String> info = Arrays.stream(line.substring(3).trim().split("\\s+")).filter(s -> !s.isEmpty()).toList();
      int end = i + 1;
      while (end < lines.size() && !lines.get(end).startsWith("```")) {
        end++;
      }
      if (end == lines.size()) {
        throw new IllegalStateException(file + ":" + (i + 1) + ": a code block is never closed");
      }
      blocks.add(new Block(file, i + 1, info, List.copyOf(lines.subList(i + 1, end))));
      i = end;
    }
    return blocks;
  }
}
