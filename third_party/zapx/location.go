//  Copyright (c) 2026 guide's authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// 		http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package zap

// A document's locations in a postings list are written one after another, each as
//
//	fieldID<<1 | more, zigzag(pos - the previous location's pos)  [, start, end, n, n array positions]
//
// where the previous position is 0 for the document's first location, and the part in
// brackets is there only when more is 1: when the location has byte offsets or array
// positions. A location that has neither, the usual one of an index that keeps positions
// for phrases and finds its matches in the text, takes two bytes where upstream's fixed
// five integers (field, pos, start, end, n) took five or more.

// appendLocation appends the integers that encode a location after one at prevPos.
func appendLocation(vals []uint64, fieldID uint64, pos, prevPos, start, end uint64,
	arrayPositions []uint64) []uint64 {
	d := int64(pos - prevPos)
	zz := uint64(d<<1) ^ uint64(d>>63)
	if start == 0 && end == 0 && len(arrayPositions) == 0 {
		return append(vals, fieldID<<1, zz)
	}
	vals = append(vals, fieldID<<1|1, zz, start, end, uint64(len(arrayPositions)))
	return append(vals, arrayPositions...)
}

// uvarintsLen is how many bytes vals take as uvarints.
func uvarintsLen(vals []uint64) (n int) {
	for _, v := range vals {
		n += numUvarintBytes(v)
	}
	return n
}

// unzigzag is the position delta a zigzag-encoded integer stands for.
func unzigzag(zz uint64) uint64 {
	return uint64(int64(zz>>1) ^ -int64(zz&1))
}
