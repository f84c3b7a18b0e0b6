package dev.hamilock.doctor;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.hamilock.core.store.LockJudgement;
import dev.hamilock.preflight.FindingFormat;
import dev.hamilock.preflight.check.Finding;
import java.util.List;
import java.util.Locale;

/** Renders a {@link DoctorReport} as text tables or JSON. */
public final class ReportWriter {

  private static final String NL = System.lineSeparator();
  private static final String NODE_ROW = "%-20s %4s %17s %11s  %-24s %-16s %-28s %s%n";
  private static final String MEMBER_ROW = "%-24s %-16s %-10s %-16s %-11s %s%n";

  private ReportWriter() {}

  /**
   * @param report a report
   * @return readable text: the command's table, the findings (severity, id, where; message and
   *     {@code fix:}), notes and how many reads failed (the command names each on standard error,
   *     once)
   */
  public static String table(DoctorReport report) {
    StringBuilder sb = new StringBuilder();
    // locks prints its header over an empty cluster too, but not when the nodes could not be read
    if ((report.command().equals("locks") && report.unreadable().isEmpty())
        || !report.nodes().isEmpty()) {
      sb.append(
          String.format(
              Locale.ROOT,
              NODE_ROW,
              "NODE",
              "GPUS",
              "MEM MiB used/total",
              "CORES",
              "LOCK KEY",
              "STATE",
              "HOLDER",
              "AGE"));
      for (NodeEntry n : report.nodes()) {
        String mem = n.gpus() == 0 ? "-" : n.usedMemMiB() + "/" + n.totalMemMiB();
        String cores = n.gpus() == 0 ? "-" : n.usedCores() + "/" + n.totalCores();
        if (n.locks().isEmpty()) {
          sb.append(
              String.format(
                  Locale.ROOT, NODE_ROW, n.node(), n.gpus(), mem, cores, "-", "free", "-", "-"));
        }
        for (LockEntry l : n.locks()) {
          sb.append(
              String.format(
                  Locale.ROOT,
                  NODE_ROW,
                  n.node(),
                  n.gpus(),
                  mem,
                  cores,
                  l.key(),
                  l.state().word(),
                  l.holder().orElse("-"),
                  l.age().map(LockJudgement::formatAge).orElse("-")));
          sb.append("    ").append(l.detail()).append(NL);
        }
        n.registration().ifPresent(p -> sb.append("    registration: ").append(p).append(NL));
        n.dra().forEach(d -> sb.append("    dra: ").append(d).append(NL));
      }
      sb.append(NL);
    }
    report
        .gang()
        .ifPresent(
            g -> {
              sb.append("PodGroup ")
                  .append(g.namespace())
                  .append('/')
                  .append(g.name())
                  .append(
                      g.found()
                          ? ": minMember "
                              + g.minMember()
                              + ", "
                              + g.memberCount()
                              + " member(s) created, phase "
                              + (g.podGroupPhase().isEmpty() ? "unset" : g.podGroupPhase())
                          : ": not found")
                  .append(NL);
              sb.append("scheduler ")
                  .append(g.schedulerAccount())
                  .append(" may get/list/watch podgroups: ")
                  .append(g.schedulerMayRead().map(b -> b ? "yes" : "NO").orElse("unknown"))
                  .append(NL)
                  .append(NL);
              sb.append(
                  String.format(
                      Locale.ROOT,
                      MEMBER_ROW,
                      "POD",
                      "FOUND BY",
                      "PHASE",
                      "NODE",
                      "BIND-PHASE",
                      "LOCK"));
              for (GangEntry.Member m : g.members()) {
                sb.append(
                    String.format(
                        Locale.ROOT,
                        MEMBER_ROW,
                        m.name(),
                        m.via().equals("annotation") ? "annotation(!)" : m.via(),
                        m.phase(),
                        m.node().isEmpty() ? "-" : m.node(),
                        m.bindPhase().isEmpty() ? "-" : m.bindPhase(),
                        m.lock().isEmpty() ? "-" : m.lock()));
                if (!m.scheduling().isEmpty()) {
                  sb.append("    scheduling: ").append(m.scheduling()).append(NL);
                }
                if (!m.latestEvent().isEmpty()) {
                  sb.append("    latest event: ").append(m.latestEvent()).append(NL);
                }
              }
              sb.append(NL);
            });
    report.action().ifPresent(a -> sb.append(a).append(NL));
    if (!report.findings().isEmpty()) {
      FindingFormat.appendTable(sb, report.findings(), 32, "WHERE", ReportWriter::where);
      sb.append(NL);
    }
    for (String n : report.notes()) {
      sb.append("note: ").append(n).append(NL);
    }
    sb.append(
        String.format(
            Locale.ROOT,
            "%s: %s%s.%n",
            report.command(),
            FindingFormat.severityCounts(report::count),
            report.unreadable().isEmpty()
                ? ""
                : "; "
                    + report.unreadable().size()
                    + " read(s) failed (each named once, on standard error)"));
    return sb.toString();
  }

  private static JsonObject preemption(PreemptEntry p) {
    JsonObject o = new JsonObject();
    o.addProperty("pod", p.preemptor());
    o.addProperty("priority", p.priority());
    o.addProperty("preemptionPolicy", p.preemptionPolicy());
    p.bestNode().ifPresent(b -> o.addProperty("bestNode", b));
    o.addProperty("pdbsRead", p.pdbsRead());
    JsonArray nodes = new JsonArray();
    for (PreemptEntry.NodeOutcome n : p.nodes()) {
      JsonObject no = new JsonObject();
      no.addProperty("node", n.node());
      no.addProperty("outcome", n.outcome());
      no.addProperty("pdbViolations", n.pdbViolations());
      no.addProperty("reason", n.reason());
      no.add("victims", victims(n.victims()));
      nodes.add(no);
    }
    o.add("nodes", nodes);
    p.gang()
        .ifPresent(
            g -> {
              JsonObject go = new JsonObject();
              go.addProperty("name", g.name());
              go.addProperty("placed", g.placed());
              go.addProperty("pdbViolations", g.pdbViolations());
              JsonArray members = new JsonArray();
              for (PreemptEntry.Member m : g.members()) {
                JsonObject mo = new JsonObject();
                mo.addProperty("pod", m.pod());
                mo.addProperty("node", m.node());
                members.add(mo);
              }
              go.add("members", members);
              go.add("victims", victims(g.victims()));
              o.add("gang", go);
            });
    return o;
  }

  private static JsonArray victims(List<PreemptEntry.Victim> list) {
    JsonArray victims = new JsonArray();
    for (PreemptEntry.Victim v : list) {
      JsonObject vo = new JsonObject();
      vo.addProperty("pod", v.pod());
      vo.addProperty("priority", v.priority());
      vo.addProperty("node", v.node());
      v.gang().ifPresent(g -> vo.addProperty("gang", g));
      victims.add(vo);
    }
    return victims;
  }

  private static String where(Finding f) {
    return f.location().path().isEmpty()
        ? f.location().source()
        : f.location().source() + " " + f.location().path();
  }

  /**
   * @param report a report
   * @return {@code {"command", "exit", "summary": {error, warning, info}, "nodes": [{node, gpus,
   *     memUsedMiB, memTotalMiB, coresUsed, coresTotal, registration?, locks: [{key, value, state,
   *     holder?, ageSeconds?, detail}]}], "gang"?: {...}, "action"?, "preemption"?: {pod, priority,
   *     preemptionPolicy, bestNode?, pdbsRead, nodes: [{node, outcome, pdbViolations, reason,
   *     victims: [{pod, priority, node, gang?}]}], gang?: {name, placed, pdbViolations, members:
   *     [{pod, node}], victims: [..]}}, "findings": [{check, name, severity, where, path, message,
   *     fix}], "notes": [..], "unreadable": [{what, code, missingPermission?, message}]}}
   */
  public static String json(DoctorReport report) {
    JsonObject root = new JsonObject();
    root.addProperty("command", report.command());
    root.addProperty("exit", report.exitStatus());
    root.add("summary", FindingFormat.severitySummary(report::count));
    JsonArray nodes = new JsonArray();
    for (NodeEntry n : report.nodes()) {
      JsonObject o = new JsonObject();
      o.addProperty("node", n.node());
      o.addProperty("gpus", n.gpus());
      o.addProperty("memUsedMiB", n.usedMemMiB());
      o.addProperty("memTotalMiB", n.totalMemMiB());
      o.addProperty("coresUsed", n.usedCores());
      o.addProperty("coresTotal", n.totalCores());
      n.registration().ifPresent(p -> o.addProperty("registration", p));
      JsonArray dra = new JsonArray();
      n.dra().forEach(dra::add);
      o.add("dra", dra);
      JsonArray locks = new JsonArray();
      for (LockEntry l : n.locks()) {
        JsonObject lo = new JsonObject();
        lo.addProperty("key", l.key());
        lo.addProperty("value", l.value());
        lo.addProperty("state", l.state().word());
        l.holder().ifPresent(h -> lo.addProperty("holder", h));
        l.age().ifPresent(a -> lo.addProperty("ageSeconds", a.getSeconds()));
        lo.addProperty("detail", l.detail());
        locks.add(lo);
      }
      o.add("locks", locks);
      nodes.add(o);
    }
    root.add("nodes", nodes);
    report
        .gang()
        .ifPresent(
            g -> {
              JsonObject o = new JsonObject();
              o.addProperty("namespace", g.namespace());
              o.addProperty("name", g.name());
              o.addProperty("found", g.found());
              o.addProperty("minMember", g.minMember());
              o.addProperty("members", g.memberCount());
              o.addProperty("phase", g.podGroupPhase());
              o.addProperty("schedulerAccount", g.schedulerAccount());
              g.schedulerMayRead().ifPresent(b -> o.addProperty("schedulerMayReadPodGroups", b));
              JsonArray pods = new JsonArray();
              for (GangEntry.Member m : g.members()) {
                JsonObject p = new JsonObject();
                p.addProperty("pod", m.name());
                p.addProperty("foundBy", m.via());
                p.addProperty("member", m.isMember());
                p.addProperty("phase", m.phase());
                p.addProperty("node", m.node());
                p.addProperty("bindPhase", m.bindPhase());
                p.addProperty("scheduling", m.scheduling());
                p.addProperty("latestEvent", m.latestEvent());
                p.addProperty("lock", m.lock());
                pods.add(p);
              }
              o.add("pods", pods);
              root.add("gang", o);
            });
    report.action().ifPresent(a -> root.addProperty("action", a));
    report.preemption().ifPresent(p -> root.add("preemption", preemption(p)));
    JsonArray findings = new JsonArray();
    for (Finding f : report.findings()) {
      findings.add(
          FindingFormat.findingJson(
              f,
              (o, g) -> {
                o.addProperty("where", g.location().source());
                o.addProperty("path", g.location().path());
              }));
    }
    root.add("findings", findings);
    JsonArray notes = new JsonArray();
    report.notes().forEach(notes::add);
    root.add("notes", notes);
    JsonArray unreadable = new JsonArray();
    for (ClusterReadException e : report.unreadable()) {
      JsonObject o = new JsonObject();
      o.addProperty("what", e.what());
      o.addProperty("code", e.code());
      e.missingPermission().ifPresent(p -> o.addProperty("missingPermission", p));
      o.addProperty("message", e.getMessage());
      unreadable.add(o);
    }
    root.add("unreadable", unreadable);
    return FindingFormat.pretty(root);
  }
}
