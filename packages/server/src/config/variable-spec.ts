// What each environment variable is (CONFIG_VARIABLES, variables.ts): its name, its
// default, what it accepts, what it means, and how it sets the configuration.
import type { Config } from './config.js';

export type Setter = (c: Config, raw: string) => void;

export interface VariableSpec {
  name: string;
  /** The default as the README shows it; one in parentheses describes "unset". */
  default: string;
  /** The default value when it is computed at start-up (and so cannot be the text above). */
  value?: () => string;
  accepts: string;
  description: string;
  set: Setter;
}
