export default { base: './', logLevel: 'warn', build: { target: 'es2022', outDir: 'dist', emptyOutDir: true } };
