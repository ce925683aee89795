/**
 * The `springfield` CLI's package on the npm registry (`npm install -g @springfield-agents/cli`): the
 * name `springfield` there belongs to another project. The command it installs is `springfield`.
 */
export const CLI_PACKAGE = '@springfield-agents/cli';
