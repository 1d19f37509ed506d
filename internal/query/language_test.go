package query_test

import (
	"testing"

	"github.com/guide/guide/internal/query"
)

func TestDetectLanguage(t *testing.T) {
	for _, tc := range []struct{ want, text string }{
		{"en", "The cartographer drew the map of the northern coast, and it was the best that they had seen."},
		{"de", "Die Kartografin zeichnete die Karte der Küste, und sie ist nicht nur schön, sondern auch genau."},
		{"fr", "La cartographe a dessiné la carte de la côte, et elle est dans le tiroir avec les autres pour nous."},
		{"es", "La cartógrafa dibujó el mapa de la costa y es el mejor que se ha visto por los puertos del norte."},
		{"ru", "Картограф нарисовала карту северного побережья, и это была лучшая карта."},
		{"uk", "Картографиня намалювала мапу північного узбережжя, і це була найкраща мапа."},
		{"zh", "制图师绘制了北部海岸的地图，这是他们见过的最好的地图。"},
		{"ja", "地図製作者は北の海岸の地図を描きました。それは最高の地図でした。"},
		{"ko", "지도 제작자는 북쪽 해안의 지도를 그렸습니다. 최고의 지도였습니다."},
		{"und", "12345 -- 678"},
		{"und", "Elara Voss"},
	} {
		if got := query.DetectLanguage([]byte(tc.text)); got != tc.want {
			t.Errorf("DetectLanguage(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
