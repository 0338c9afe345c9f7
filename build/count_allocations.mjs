// An asc transform for both builds: every call of the runtime's __new and
// __renew adds one to assembly/collection.ts's counter, so the collector runs
// only when there is garbage and the benchmark and tests can see how many
// allocations a request costs. The counter lives in the program's own global,
// read through an ordinary export: the module's imports and exports stay the
// ones a proxy links.
import { Transform } from "assemblyscript/transform";

const COUNTER = "assembly/collection/allocationCount";
const COUNTED = ["~lib/rt/tcms/__new", "~lib/rt/tcms/__renew"];

export default class CountAllocations extends Transform {
  afterCompile(module) {
    const binaryen = this.binaryen;
    if (!module.getGlobal(COUNTER)) throw new Error(`count_allocations: no global ${COUNTER}`);
    for (const name of COUNTED) {
      const ref = module.getFunction(name);
      if (!ref) throw new Error(`count_allocations: no function ${name}`);
      const info = binaryen.getFunctionInfo(ref);
      const bump = module.global.set(COUNTER, module.i64.add(module.global.get(COUNTER, binaryen.i64), module.i64.const(1, 0)));
      module.removeFunction(name);
      module.addFunction(name, info.params, info.results, info.vars, module.block(null, [bump, info.body], info.results));
    }
  }
}
