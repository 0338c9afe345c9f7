import type { Command } from "commander";
import { stringify } from "yaml";
import { ConfigError } from "../../../config/errors.ts";
import { loadSources } from "../../../config/sources.ts";
import { yamlDocuments } from "../../../config/yaml.ts";
import { EXIT_BAD_CONFIG, EXIT_FAILURE, EXIT_OK } from "../../../daemon/exit_codes.ts";
import { globalFlags } from "../global_flags.ts";
import { meshctlLog } from "../log.ts";
import type { MeshctlIo } from "../io.ts";
import { diffManifests, parseList, parseRenames, readManifests } from "../manifest/diff.ts";
import { migrate } from "../manifest/migrate.ts";
import { manifestText, renderManifests, resolveSpec, writeManifests } from "../manifest/render.ts";
import { overlay } from "../manifest/values.ts";
import { readSourceText } from "../../../config/source_text.ts";

const collectSlice = (value: string, previous: string[]) => [...previous, ...value.split(",").filter((v) => v.length > 0)];
const collect = (value: string, previous: string[]) => [...previous, value];

interface GroupFlags {
  dryRun: boolean;
  logtostderr: boolean;
  verbose: boolean;
}

/**
 * `meshctl manifest generate | diff | migrate` (spec 3), offline: the install
 * manifests rendered from a profile and overrides, two renderings compared,
 * older install settings converted. `apply` and `versions` need a cluster or
 * a published list and stay with the orchestrator-only commands.
 */
export function registerManifest(program: Command, _experimental: Command, io: MeshctlIo): void {
  const manifest = program
    .command("manifest")
    .description("Generate, apply, diff or migrate install manifests")
    .option("--dry-run", "console output only; generate, diff and migrate never change anything", false)
    .option("--logtostderr", "log to stderr (meshctl always does)", false)
    .option("--verbose", "say what was read and written on stderr", false);
  const verbose = (cmd: Command) => (cmd.optsWithGlobals() as GroupFlags).verbose;
  const report = (e: unknown): number => {
    if (e instanceof ConfigError) {
      io.stderr.write(`Error: ${e.message}\n`);
      return EXIT_BAD_CONFIG;
    }
    throw e;
  };

  manifest
    .command("generate")
    .description("Render the install manifests (CRDs, disco-discovery, hubs, mesh_ca, webhooks) of a profile with overrides, without a cluster")
    .option(
      "-f, --filename <files>",
      "MeshOperator files (install.mesh.io/v1alpha1), overlaid left to right; repeat or separate with commas",
      collectSlice,
      [] as string[],
    )
    .option(
      "-s, --set <path=value>",
      "override a value by dotted path (profile=demo, components.hub.enabled=false, values.global.logLevel=default:debug); a backslash escapes a dot in a key; repeatable",
      collect,
      [] as string[],
    )
    .option("-o, --output <dir>", "write DIR/<Component>/<Component>.yaml instead of printing")
    .option("--force", "skip a -f or --set value that does not fit (with a warning) instead of failing", false)
    .action((opts: { filename: string[]; set: string[]; output?: string; force: boolean }, cmd: Command) => {
      try {
        const files = loadSources(opts.filename, { stdin: io.stdinText });
        if (files.unreadable.length > 0) throw new ConfigError({ file: files.unreadable[0].path }, "--filename", "a readable file", files.unreadable[0].reason);
        if (files.problems.length > 0) throw new ConfigError({ file: files.problems[0].file }, files.problems[0].fieldPath, files.problems[0].message);
        const warnings: string[] = [];
        let spec = resolveSpec(files.documents, opts.set, opts.force, warnings, io.env);
        // The global -i names the install namespace too, unless --set does.
        if (cmd.parent?.parent?.getOptionValueSource("meshNamespace") === "cli" && !opts.set.some((s) => /^(spec\.)?meshNamespace=/.test(s))) {
          spec = overlay(spec, { meshNamespace: globalFlags(cmd).meshNamespace }, "-i/--meshNamespace");
        }
        const log = meshctlLog(globalFlags(cmd).logOutputLevel, io.stderr);
        for (const w of warnings) log.warn("installer", w);
        const rendered = renderManifests(spec);
        log.info("installer", `profile ${spec.profile}: ${[...rendered].map(([name, objects]) => `${name} ${objects.length} objects`).join(", ")}`);
        if (opts.output) {
          const written = writeManifests(opts.output, rendered);
          if (verbose(cmd)) for (const f of written) io.stderr.write(`wrote ${f}\n`);
        } else {
          io.stdout.write([...rendered.values()].map(manifestText).join("---\n"));
        }
        io.exitCode = EXIT_OK;
      } catch (e) {
        io.exitCode = report(e);
      }
    });

  manifest
    .command("diff")
    .description("Compare two renderings (files or folders) object by object (Kind:namespace:name); exit 1 when they differ")
    .argument("<a>", "manifest file or folder")
    .argument("<b>", "manifest file or folder")
    .option("-r, --directory", "the arguments are folders (every .yaml under them)", false)
    .option("--select <items>", "compare only Kind:namespace:name items (comma-separated, * or an empty part matches anything)", "::")
    .option("--ignore <items>", "leave out Kind:namespace:name items; Kind:namespace:name:field.path ignores that field (glob) only")
    .option("--rename <pairs>", "rename objects of the first rendering: Kind:namespace:name->Kind:namespace:name, comma-separated", "")
    .action((a: string, b: string, opts: { directory: boolean; select: string; ignore?: string; rename: string }) => {
      try {
        const result = diffManifests(readManifests(a, opts.directory), readManifests(b, opts.directory), {
          select: parseList(opts.select),
          ignore: parseList(opts.ignore ?? ""),
          rename: parseRenames(opts.rename),
        });
        io.stdout.write(result.text);
        io.exitCode = result.same ? EXIT_OK : EXIT_FAILURE;
      } catch (e) {
        io.exitCode = report(e);
      }
    });

  manifest
    .command("migrate")
    .description("Convert Helm values or the older MeshControlPlane resource to the MeshOperator format (stdin without a file)")
    .argument("[filepath]", "the values or MeshControlPlane file; - or nothing reads stdin")
    .option("--force", "print the result even when a setting could not be carried over", false)
    .action((file: string | undefined, opts: { force: boolean }) => {
      try {
        const { name, text } = readSourceText(file ?? "-", io.stdinText);
        const docs = yamlDocuments(text);
        if (docs.length !== 1 || !docs[0].ok)
          throw new ConfigError(
            { file: name },
            "(file)",
            "one YAML document",
            docs.length !== 1 ? `${docs.length} documents` : (docs[0] as { message: string }).message,
          );
        const warnings: string[] = [];
        const result = migrate(docs[0].value, name, warnings);
        for (const w of warnings) io.stderr.write(`warning: ${name}: ${w}\n`);
        if (warnings.length > 0 && !opts.force) {
          io.stderr.write(`Error: ${warnings.length} setting(s) have no equivalent (above); pass --force to print the rest\n`);
          io.exitCode = EXIT_FAILURE;
          return;
        }
        io.stdout.write(stringify(result, { lineWidth: 0 }));
        io.exitCode = EXIT_OK;
      } catch (e) {
        io.exitCode = report(e);
      }
    });
}
