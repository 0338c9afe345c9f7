// as-pect runs the AssemblyScript unit specs under test/assembly.
// The pure hot path never calls the proxy; the only import a spec can reach
// is proxy_log, through the abort handler, which as-pect's own abort replaces.
export default {
  entries: ["test/assembly/**/*.spec.ts"],
  include: ["test/assembly/**/*.include.ts"],
  disclude: [/node_modules/],
  async instantiate(memory, createImports, instantiate, binary) {
    const logs = [];
    const env = {
      memory,
      proxy_log(level, ptr, len) {
        logs.push([level, ptr, len]);
        return 0;
      },
    };
    return instantiate(binary, createImports({ env }));
  },
  outputBinary: false,
};
