// Every environment variable: name, default, what it accepts, what it means, and
// how it sets the configuration. The defaults of the running server and the README's
// configuration table both come from this one list.
import { BASIC_VARIABLES } from './variables-basics.js';
import { FEATURE_VARIABLES } from './variables-features.js';
import { INPUT_SIZE_VARIABLES } from './variables-input-sizes.js';
import { LIMIT_VARIABLES } from './variables-limits.js';
import { POOL_VARIABLES } from './variables-pool.js';
import { SANDBOX_VARIABLES } from './variables-sandboxes.js';
import type { VariableSpec } from './variable-spec.js';

export type { VariableSpec } from './variable-spec.js';
export { DEFAULT_BLOCKLIST } from './variables-basics.js';

/** Every variable, in the order the configuration table lists them (each part's file holds its own). */
export const CONFIG_VARIABLES: VariableSpec[] = [...BASIC_VARIABLES, ...POOL_VARIABLES, ...FEATURE_VARIABLES, ...LIMIT_VARIABLES, ...INPUT_SIZE_VARIABLES, ...SANDBOX_VARIABLES];
