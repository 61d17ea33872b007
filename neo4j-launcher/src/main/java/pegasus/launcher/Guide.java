package pegasus.launcher;

import java.util.ArrayList;
import java.util.List;

/**
 * A Browser guide (opened with {@code :play}): a first slide that sets the memory
 * owner, then one slide per saved query. A query file's leading comment lines are
 * its description; Browser puts a runnable block in the editor with one click.
 */
final class Guide {
    private Guide() {}

    record Query(String name, String text) {}

    static String render(List<Query> queries) {
        StringBuilder html = new StringBuilder();
        html.append("<article class=\"guide\">\n<carousel class=\"deck container-fluid\">\n");
        slide(html, "Pegasus memory",
                List.of("Each memory owner's data carries its <code>user</code>.",
                        "Run this first (change the owner and the name to yours), then go"
                                + " through the saved queries with the arrows."),
                ":param user => 'default';\n:param name => 'Joshua'");
        for (Query query : queries) {
            List<String> about = new ArrayList<>();
            StringBuilder cypher = new StringBuilder();
            for (String line : query.text().split("\n")) {
                if (cypher.isEmpty() && line.startsWith("//")) {
                    String said = line.substring(2).trim();
                    if (!said.startsWith("In Browser:")) {
                        about.add(escape(said));
                    }
                } else {
                    cypher.append(line).append('\n');
                }
            }
            slide(html, query.name(), about, cypher.toString().strip());
        }
        html.append("</carousel>\n</article>\n");
        return html.toString();
    }

    private static void slide(StringBuilder html, String title, List<String> about, String cypher) {
        html.append("<slide class=\"row-fluid\">\n<div class=\"col-sm-12\">\n<h3>")
                .append(escape(title)).append("</h3>\n");
        for (String line : about) {
            html.append("<p>").append(line).append("</p>\n");
        }
        html.append("<pre mode=\"cypher\" class=\"pre-scrollable code runnable\">")
                .append(escape(cypher)).append("</pre>\n</div>\n</slide>\n");
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
