from specc.cli import main

raise SystemExit(main())
