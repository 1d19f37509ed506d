package corpus

// The word lists the generator draws from. They live in the code so that a corpus is
// the same on every machine, with no download.

var english = []string{
	"the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "with", "be", "on",
	"this", "are", "by", "or", "from", "an", "at", "which", "not", "can", "when", "each",
	"all", "if", "must", "should", "may", "will", "one", "two", "every", "before", "after",
	"agent", "agents", "guideline", "guidelines", "prompt", "prompts", "document", "documents",
	"folder", "project", "review", "reviewer", "change", "changes", "commit", "branch", "merge",
	"test", "tests", "coverage", "build", "release", "deploy", "service", "server", "client",
	"request", "response", "error", "errors", "handler", "context", "timeout", "retry", "backoff",
	"queue", "stream", "event", "events", "index", "search", "query", "result", "results",
	"cache", "config", "configuration", "setting", "default", "value", "values", "field",
	"schema", "version", "format", "file", "files", "path", "name", "names", "type", "types",
	"function", "method", "interface", "package", "module", "library", "dependency", "import",
	"user", "users", "customer", "account", "session", "token", "permission", "role", "team",
	"design", "architecture", "layer", "boundary", "contract", "protocol", "transport",
	"database", "table", "column", "row", "record", "transaction", "migration", "backup",
	"latency", "throughput", "memory", "disk", "network", "process", "thread", "lock",
	"read", "write", "open", "close", "start", "stop", "run", "call", "return", "send",
	"receive", "publish", "consume", "apply", "update", "delete", "create", "list", "show",
	"keep", "make", "use", "add", "remove", "check", "verify", "measure", "report", "log",
	"clear", "simple", "small", "large", "fast", "slow", "safe", "stable", "new", "old",
	"first", "last", "next", "previous", "current", "local", "remote", "public", "private",
	"chapter", "scene", "character", "story", "plot", "draft", "outline", "note", "notes",
	"world", "city", "river", "mountain", "forest", "castle", "village", "kingdom", "storm",
	"night", "morning", "winter", "summer", "journey", "letter", "voice", "memory", "secret",
	"she", "he", "they", "we", "you", "her", "his", "their", "our", "your", "its",
	"quickly", "carefully", "always", "never", "often", "only", "also", "still", "again",
	"because", "although", "while", "until", "unless", "however", "therefore", "instead",
	"example", "examples", "step", "steps", "rule", "rules", "policy", "standard", "style",
	"comment", "comments", "description", "summary", "detail", "details", "section", "page",
	"product", "feature", "features", "roadmap", "milestone", "issue", "issues", "bug", "fix",
	"api", "endpoint", "resource", "resources", "tool", "tools", "command", "flag", "option",
	"input", "output", "payload", "header", "body", "status", "code", "message", "reason",
	"metric", "metrics", "alert", "dashboard", "incident", "runbook", "oncall", "owner",
	"well-known", "don't", "it's", "read-only", "up-to-date", "end-to-end", "two-way",
}

var german = []string{
	"der", "die", "das", "und", "ist", "nicht", "mit", "für", "auf", "eine", "ein", "werden",
	"Richtlinie", "Richtlinien", "Dokument", "Ordner", "Änderung", "Prüfung", "Größe",
	"Straße", "Übersicht", "Beispiel", "Anleitung", "Einstellung", "Fehler", "Schnittstelle",
	"Benutzer", "Kunde", "Vertrag", "Abhängigkeit", "Veröffentlichung", "Zusammenfassung",
	"schnell", "langsam", "groß", "klein", "gemäß", "über", "während", "würde", "müssen",
	"können", "sollen", "immer", "niemals", "zuerst", "danach", "außerdem", "jedoch",
	"Geschichte", "Kapitel", "Figur", "Stadt", "Fluss", "Wald", "Burg", "Nacht", "Sturm",
	"Schlüssel", "Verzeichnis", "Zeitüberschreitung", "Wiederholung", "Protokoll", "Lösung",
}

var russian = []string{
	"и", "в", "не", "на", "что", "с", "как", "это", "по", "для", "или", "если", "все",
	"документ", "папка", "правило", "правила", "изменение", "проверка", "сервер", "клиент",
	"запрос", "ответ", "ошибка", "ошибки", "пользователь", "настройка", "пример", "описание",
	"индекс", "поиск", "событие", "поток", "память", "процесс", "задача", "команда",
	"быстро", "медленно", "всегда", "никогда", "сначала", "затем", "однако", "поэтому",
	"история", "глава", "герой", "город", "река", "лес", "замок", "ночь", "буря", "зима",
	"руководство", "обзор", "версия", "зависимость", "выпуск", "отчёт", "решение", "ключ",
}

var chinese = []string{
	"文档", "目录", "规则", "指南", "修改", "检查", "服务器", "客户端", "请求", "响应",
	"错误", "用户", "配置", "示例", "描述", "索引", "搜索", "事件", "数据", "内存",
	"进程", "任务", "命令", "快速", "总是", "从不", "首先", "然后", "但是", "因此",
	"故事", "章节", "人物", "城市", "河流", "森林", "城堡", "夜晚", "风暴", "冬天",
	"版本", "依赖", "发布", "报告", "方案", "密钥", "我们", "他们", "这个", "那个",
	"的", "是", "在", "和", "有", "不", "了", "也", "就", "都",
}

var korean = []string{
	"문서", "폴더", "규칙", "지침", "변경", "검사", "서버", "클라이언트", "요청", "응답",
	"오류", "사용자", "설정", "예제", "설명", "색인", "검색", "이벤트", "데이터", "메모리",
	"프로세스", "작업", "명령", "빠르게", "항상", "절대", "먼저", "그다음", "하지만", "따라서",
	"이야기", "장", "인물", "도시", "강", "숲", "성", "밤", "폭풍", "겨울",
	"버전", "의존성", "배포", "보고서", "해결", "열쇠", "우리는", "그들은", "이것은", "그것은",
	"합니다", "있습니다", "없습니다", "입니다", "됩니다", "에서", "으로", "그리고", "또는", "모든",
}

// folderWords name folders; a few are in other languages, as in real trees.
var folderWords = []string{
	"guidelines", "prompts", "docs", "reference", "api", "howto", "tutorials", "design",
	"architecture", "decisions", "adr", "runbooks", "operations", "security", "testing",
	"frontend", "backend", "mobile", "data", "ml", "infra", "platform", "billing", "auth",
	"search", "notifications", "onboarding", "policies", "templates", "snippets", "examples",
	"archive", "drafts", "notes", "meetings", "retros", "planning", "roadmap", "releases",
	"Characters", "Worldbuilding", "Plot", "Chapters", "Scenes", "Research", "Outlines",
	"go", "python", "typescript", "rust", "java", "sql", "kubernetes", "terraform", "ci",
	"style", "review", "team", "product", "support", "legal", "marketing", "sales", "hr",
	"Notizen", "Richtlinien", "Entwürfe", "заметки", "руководства", "笔记", "指南", "메모", "지침",
	"v1", "v2", "2023", "2024", "2025", "internal", "public", "shared", "misc", "old",
}

var codeLangs = []string{"go", "bash", "yaml", "json", "python", "typescript", "sql", ""}

var codeSnippets = map[string][]string{
	"go": {
		"func %s(ctx context.Context, %s string) error {\n\tif %s == \"\" {\n\t\treturn fmt.Errorf(\"empty %s\")\n\t}\n\treturn nil\n}",
		"type %s struct {\n\tName  string\n\t%s int\n\tMu    sync.Mutex\n}\n\n// %s returns the %s.\nfunc (x *%s) String() string { return x.Name }",
		"for _, %s := range items {\n\tif err := process(%s); err != nil {\n\t\tlog.Printf(\"%s: %%v\", err)\n\t\tcontinue\n\t}\n}",
	},
	"bash": {
		"set -euo pipefail\ncd \"$(dirname \"$0\")\"\n%s --%s=%s ./...\necho \"done: %s\"",
		"for f in *.md; do\n  %s \"$f\" | grep -c %s || true\ndone",
	},
	"yaml": {
		"%s:\n  enabled: true\n  %s: 30s\n  targets:\n    - %s\n    - %s",
		"name: %s\non:\n  push:\n    branches: [main]\njobs:\n  %s:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make %s",
	},
	"json": {
		"{\n  \"%s\": {\n    \"%s\": 42,\n    \"enabled\": true,\n    \"tags\": [\"%s\", \"%s\"]\n  }\n}",
	},
	"python": {
		"def %s(%s):\n    \"\"\"Return the %s.\"\"\"\n    if not %s:\n        raise ValueError(\"empty\")\n    return %s",
	},
	"typescript": {
		"export async function %s(%s: string): Promise<void> {\n  const res = await fetch(`/api/%s/${%s}`);\n  if (!res.ok) throw new Error(res.statusText);\n}",
	},
	"sql": {
		"SELECT %s, count(*) AS n\nFROM %s\nWHERE %s IS NOT NULL\nGROUP BY %s\nORDER BY n DESC;",
	},
	"": {
		"$ %s --%s\n%s: ok (%s)",
	},
}
